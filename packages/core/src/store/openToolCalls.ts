import type { Checkpoint } from '../conversation/checkpoint.js';
import type { Message } from '../conversation/message.js';
import { type OpenToolCall, openCallResults } from '../conversation/openCallResults.js';
import { type Request, requestKey } from '../conversation/request.js';
import { createId } from '../ids.js';
import type { Store, TenantScope } from './store.js';

/**
 * What one branch of a stored session still waits on: tool calls without a result (a paused step:
 * a pending request, or results not committed yet) and the pending requests of its newest
 * checkpoint that nothing stored has answered (`human_step` requests included, which have no tool call).
 */
export interface OpenToolCalls {
  branchId: string;
  /** The branch's last seq; results are appended after it. */
  lastSeq: number;
  /** The calls without a result, in call order. */
  calls: OpenToolCall[];
  /** The requests still waiting (a participant withdraws what it queued for them when they are dropped). */
  requests: Request[];
}

/** How {@link answerOpenToolCalls} answers. */
export interface AnswerOpenToolCallsOptions {
  /**
   * The error result of a call whose tool did not run, e.g.
   * `The conversation was closed before this was answered (idle).`
   */
  content: string;
  /** The close reason the first result of each branch carries (`metadata.control`, an `end_conversation`). */
  reason: string;
  /** The results' `createdAt` (default now). */
  now?: Date;
  /** The session's tenant (every store call carries it). */
  scope?: TenantScope;
}

/**
 * The tool calls and requests left open on each branch of a stored session, read from the stored
 * history (a fork's parent prefix included: a fork never splits calls from their results) and each
 * branch's newest checkpoint. What closing a session from any branch, and the idle sweep, answer
 * and withdraw, so no branch keeps a call waiting on a closed session (docs/architecture.md invariant 3).
 *
 * @param options the session's tenant (every store call carries it); `exceptBranchId`: a branch to
 *   leave out (one whose open calls the caller answers itself)
 * @returns one entry per branch that has open calls or requests (none when nothing waits)
 * @throws {NotFoundError} when the session does not exist (for this tenant);
 *   {@link CheckpointCorruptError} when a branch's newest checkpoint is damaged; the store's errors
 * @example
 * ```ts
 * import { findOpenToolCalls } from '@baton/core';
 * const open = await findOpenToolCalls(store, 'chat-81', { tenantId: 'acme' });
 * const waiting = open.flatMap((branch) => branch.requests); // e.g. a tool_approval on a fork
 * ```
 */
export async function findOpenToolCalls(
  store: Store,
  sessionId: string,
  options: TenantScope & { exceptBranchId?: string } = {},
): Promise<OpenToolCalls[]> {
  const scope: TenantScope = options.tenantId === undefined ? {} : { tenantId: options.tenantId };
  const found: OpenToolCalls[] = [];
  for (const branch of await store.listBranches(sessionId, scope)) {
    if (branch.id === options.exceptBranchId) continue;
    // The checkpoint first: its writer stored the messages it points at before it.
    const checkpoint: Checkpoint | undefined = await store.loadCheckpoint(sessionId, branch.id, undefined, scope);
    const messages = await store.readMessages(sessionId, branch.id, scope);
    const open = new Map<string, OpenToolCall>();
    const answered = new Set<string>();
    for (const message of messages) {
      for (const call of message.toolCalls ?? []) open.set(call.id, { call, agent: message.agent });
      if (message.role === 'tool' && message.toolCallId !== undefined) {
        open.delete(message.toolCallId);
        answered.add(message.toolCallId);
      }
      const step = humanStepOf(message);
      if (step !== undefined) answered.add(step);
    }
    // A request whose answer is a pending write was answered; the step just did not go on yet.
    const finished = new Set((checkpoint?.pendingWrites ?? []).map((write) => write.toolCallId));
    const waiting = (request: Request) => !answered.has(requestKey(request)) && !finished.has(requestKey(request));
    const requests = (checkpoint?.pendingRequests ?? []).filter(waiting);
    if (open.size > 0 || requests.length > 0) {
      found.push({ branchId: branch.id, lastSeq: messages.at(-1)?.seq ?? 0, calls: [...open.values()], requests });
    }
  }
  return found;
}

/**
 * Gives each open tool call found by {@link findOpenToolCalls} a result, appended to its branch, so
 * committed history keeps every tool call answered (docs/architecture.md invariant 3): the call's
 * finished result when the branch's newest checkpoint holds one (a pending write: the tool ran, so
 * it is kept and never runs again), otherwise the error result `content` (a question the user never
 * answered, an approval nobody gave: the tool did not run). The first result of each branch carries
 * the close as its control, so a handoff runtime that loads the branch before the session document
 * says `closed` (a crash in between) closes it instead of running the agent again.
 *
 * @param open from {@link findOpenToolCalls} (branches with requests but no open calls get nothing)
 * @returns the messages appended
 * @throws {ConcurrencyError} when another writer appended to a branch meanwhile (the session is
 *   active again); {@link CheckpointCorruptError} when a branch's newest checkpoint is damaged
 * @example
 * ```ts
 * import { answerOpenToolCalls, findOpenToolCalls } from '@baton/core';
 * const open = await findOpenToolCalls(store, 'chat-81');
 * const content = 'Closed before this was answered (idle).';
 * await answerOpenToolCalls(store, 'chat-81', open, { content, reason: 'idle' });
 * ```
 */
export async function answerOpenToolCalls(
  store: Store,
  sessionId: string,
  open: readonly OpenToolCalls[],
  options: AnswerOpenToolCallsOptions,
): Promise<Message[]> {
  const { scope = {}, reason } = options;
  const createdAt = (options.now ?? new Date()).toISOString();
  const appended: Message[] = [];
  for (const branch of open) {
    if (branch.calls.length === 0) continue;
    const checkpoint = await store.loadCheckpoint(sessionId, branch.branchId, undefined, scope);
    const finished = (id: string) => checkpoint?.pendingWrites.find((w) => w.toolCallId === id);
    const answers = openCallResults(branch.calls, finished, options.content, { kind: 'end_conversation', reason });
    const results = answers.map(
      (answer, index): Message => ({
        ...answer,
        id: createId(),
        seq: branch.lastSeq + 1 + index,
        createdAt,
      }),
    );
    await store.appendMessages(sessionId, branch.branchId, results, scope);
    appended.push(...results);
  }
  return appended;
}

/** The step id an operator's answer (a `HumanExecutor`'s assistant message) carries in `metadata.humanStep`. */
function humanStepOf(message: Message): string | undefined {
  const step = message.role === 'assistant' ? message.metadata?.humanStep : undefined;
  return typeof step === 'string' ? step : undefined;
}
