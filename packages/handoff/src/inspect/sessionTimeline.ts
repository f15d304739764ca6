import {
  type Branch,
  type Checkpoint,
  MAIN_BRANCH,
  type Message,
  NotFoundError,
  type Request,
  type Session,
  type Store,
  type TenantScope,
} from '@baton/core';
import { storedControl } from '../routing/replayHistory.js';
import { REQUEST_USER_INPUT } from '../routing/requestUserInput.js';
import { type AnsweredRequest, answeredRequestOf } from '../config/answeredRequest.js';

/** One thing that happened in a session, in the order it happened (see {@link SessionTimeline}). */
export type TimelineEntry =
  /** A turn began with the user's message (`autonomous`: a turn that started without the user). */
  | { kind: 'turn'; at: string; turn: number; seq: number; text: string; autonomous: boolean }
  /** An agent took control and spoke (its first message of a run of messages). */
  | { kind: 'agent'; at: string; agent: string; seq: number }
  /** An agent's answer to the user. */
  | { kind: 'reply'; at: string; agent: string; seq: number; text: string }
  /** A tool call and its result (`result` undefined: never answered). `durationMs` is the tool's wall time. */
  | {
      kind: 'tool';
      at: string;
      agent: string;
      seq: number;
      toolCallId: string;
      toolName: string;
      arguments: string;
      result?: string;
      isError: boolean;
      durationMs?: number;
    }
  /** Control moved between agents, with the reason the model gave. */
  | { kind: 'handoff'; at: string; seq: number; from: string; to: string; reason?: string }
  /**
   * A turn paused on a request; `answer` is how it was answered (`undefined` while pending). An
   * answer starts a turn of its own (docs/architecture.md: a turn is one user message or one
   * answer to a pending request), numbered `turn`.
   */
  | { kind: 'request'; at: string; seq: number; request: Request; answer?: string; turn?: number }
  /** A checkpoint, with the size of its serialised JSON in bytes. */
  | { kind: 'checkpoint'; at: string; seq: number; id: string; step: number; bytes: number }
  /** The session was closed. */
  | { kind: 'closed'; at: string; seq: number; reason: string };

/** What {@link sessionTimeline} returns: a stored session, told in order. */
export interface SessionTimeline {
  sessionId: string;
  branchId: string;
  status: Session['status'];
  createdAt: string;
  /** Every branch of the session: `parent` is where a fork starts (`{ branchId, atSeq }`). */
  branches: readonly Pick<Branch, 'id' | 'parent' | 'createdAt'>[];
  /** Agents in the order they first spoke. */
  agents: readonly string[];
  /** Handoffs that happened, `from → to`, each pair once, in order. */
  handoffs: readonly { from: string; to: string }[];
  /** Turns, agents, replies, tool calls, handoffs, requests, checkpoints and the close, in time order (`at`). */
  entries: readonly TimelineEntry[];
  /**
   * Token usage is not stored with messages: these are the message and tool call counts. `turns`
   * counts user messages and answers to requests (each starts a turn).
   */
  counts: { turns: number; messages: number; toolCalls: number; toolErrors: number; checkpoints: number };
}

/**
 * Reads a stored session branch and tells what happened in it, in order: each turn and the user's
 * message, which agent spoke, every tool call with its duration and error, handoffs with their
 * reasons, requests and how they were answered, checkpoints with their sizes, and the session's
 * branches. Reads only (messages, checkpoints, branches); needs no workflow, model or tool, so it
 * works on any store a session was written to (the `baton inspect` command and the web chat's
 * supervisor view use it). Answered requests are read from the tool results that answered them
 * (`metadata.answeredRequest`); pending ones from the checkpoints still kept.
 *
 * @param store any `Store` (`FileStore`, `MongoStore`, `InMemoryStore`)
 * @param sessionId the session to read
 * @param options `{ branch?, tenantId? }` (default branch `'main'`)
 * @returns the {@link SessionTimeline}
 * @throws {NotFoundError} when the session or branch does not exist
 * @example
 * ```ts
 * import { FileStore } from '@baton/core';
 * import { formatTimeline, sessionTimeline } from '@baton/handoff';
 * const timeline = await sessionTimeline(new FileStore({ directory: './data' }), 'chat-81');
 * console.log(formatTimeline(timeline));
 * ```
 */
export async function sessionTimeline(
  store: Store,
  sessionId: string,
  options: { branch?: string; tenantId?: string } = {},
): Promise<SessionTimeline> {
  const branchId = options.branch ?? MAIN_BRANCH;
  const scope: TenantScope = options.tenantId === undefined ? {} : { tenantId: options.tenantId };
  const session = await store.getSession(sessionId, scope);
  if (session === undefined)
    throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist in this store.`);
  const branches = await store.listBranches(sessionId, scope);
  if (!branches.some((b) => b.id === branchId)) {
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist (branches: ${branches.map((b) => b.id).join(', ')}).`,
    );
  }
  const messages = await store.readMessages(sessionId, branchId, scope);
  const checkpoints: { checkpoint: Checkpoint; bytes: number }[] = [];
  for (const entry of await store.listCheckpoints(sessionId, branchId, scope)) {
    const checkpoint = await store.loadCheckpoint(sessionId, branchId, entry.id, scope);
    if (checkpoint !== undefined)
      checkpoints.push({ checkpoint, bytes: Buffer.byteLength(JSON.stringify(checkpoint)) });
  }
  checkpoints.sort(
    (a, b) => a.checkpoint.throughSeq - b.checkpoint.throughSeq || a.checkpoint.step - b.checkpoint.step,
  );

  const entries = tellMessages(messages);
  const results = new Map(
    messages.filter((m) => m.role === 'tool' && m.toolCallId !== undefined).map((m) => [m.toolCallId!, m]),
  );
  // Requests already told by the tool results that answered them (by request id and by tool call id).
  const told = new Set(
    entries.flatMap((e) =>
      e.kind === 'request' && e.request.type !== 'human_step' ? [e.request.id, e.request.toolCallId] : [],
    ),
  );
  const seenRequests = new Set<string>();
  const placed: TimelineEntry[] = [];
  for (const { checkpoint, bytes } of checkpoints) {
    placed.push({
      kind: 'checkpoint',
      at: checkpoint.createdAt,
      seq: checkpoint.throughSeq,
      id: checkpoint.id,
      step: checkpoint.step,
      bytes,
    });
    for (const request of checkpoint.pendingRequests) {
      if (
        seenRequests.has(request.id) ||
        told.has(request.id) ||
        (request.type !== 'human_step' && told.has(request.toolCallId))
      )
        continue;
      seenRequests.add(request.id);
      const key = request.type === 'human_step' ? request.stepId : request.toolCallId;
      placed.push(
        withAnswer(
          { kind: 'request', at: request.createdAt, seq: checkpoint.throughSeq, request },
          describeAnswer(request, results.get(key), messages),
        ),
      );
    }
  }
  const merged = merge(entries, placed);
  if (session.status === 'closed')
    merged.push({
      kind: 'closed',
      at: session.closedAt ?? session.lastActivityAt,
      seq: messages.at(-1)?.seq ?? 0,
      reason: session.closedReason ?? 'closed',
    });
  const all = numberTurns(inTimeOrder(merged));

  const agents: string[] = [];
  const handoffs: { from: string; to: string }[] = [];
  for (const entry of all) {
    if (entry.kind === 'agent' && !agents.includes(entry.agent)) agents.push(entry.agent);
    if (entry.kind === 'handoff' && !handoffs.some((h) => h.from === entry.from && h.to === entry.to))
      handoffs.push({ from: entry.from, to: entry.to });
  }
  const tools = all.filter((e) => e.kind === 'tool');
  return {
    sessionId,
    branchId,
    status: session.status,
    createdAt: session.createdAt,
    branches: branches.map((b) =>
      b.parent === undefined
        ? { id: b.id, createdAt: b.createdAt }
        : { id: b.id, parent: b.parent, createdAt: b.createdAt },
    ),
    agents,
    handoffs,
    entries: all,
    counts: {
      turns: all.filter((e) => e.kind === 'turn' || (e.kind === 'request' && e.turn !== undefined)).length,
      messages: messages.length,
      toolCalls: tools.length,
      toolErrors: tools.filter((e) => e.isError).length,
      checkpoints: checkpoints.length,
    },
  };
}

/** Turns, agents, replies, tool calls (with their results) and handoffs, from the messages alone. */
function tellMessages(messages: readonly Message[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  const calls = new Map<string, Extract<TimelineEntry, { kind: 'tool' }>>();
  let speaking: string | undefined;
  let turn = 0;
  for (const message of messages) {
    const at = message.createdAt;
    const { seq } = message;
    if (message.role === 'user') {
      turn += 1;
      speaking = undefined;
      entries.push({
        kind: 'turn',
        at,
        seq,
        turn,
        text: message.content,
        autonomous: message.metadata?.autonomous === true,
      });
    } else if (message.role === 'assistant') {
      const agent = message.agent ?? 'assistant';
      if (agent !== speaking) entries.push({ kind: 'agent', at, agent, seq });
      speaking = agent;
      for (const call of message.toolCalls ?? []) {
        const entry: Extract<TimelineEntry, { kind: 'tool' }> = {
          kind: 'tool',
          at,
          agent,
          seq,
          toolCallId: call.id,
          toolName: call.name,
          arguments: call.arguments,
          isError: false,
        };
        calls.set(call.id, entry);
        entries.push(entry);
      }
      if ((message.toolCalls ?? []).length === 0 && message.content !== '')
        entries.push({ kind: 'reply', at, agent, seq, text: message.content });
    } else if (message.role === 'tool') {
      const call = message.toolCallId === undefined ? undefined : calls.get(message.toolCallId);
      if (call !== undefined) {
        call.result = message.content;
        call.isError = message.isError ?? false;
        if (message.durationMs !== undefined) call.durationMs = message.durationMs;
      }
      const control = storedControl(message);
      if (control?.kind === 'handoff' && control.target !== undefined && !(message.isError ?? false)) {
        const from = message.agent ?? call?.agent ?? speaking ?? '';
        const reason = control.reason ?? reasonOf(call?.arguments);
        entries.push(
          reason === undefined
            ? { kind: 'handoff', at, seq, from, to: control.target }
            : { kind: 'handoff', at, seq, from, to: control.target, reason },
        );
      }
      const answered = answeredRequestOf(message);
      if (call !== undefined && (answered !== undefined || message.toolName === REQUEST_USER_INPUT))
        entries.push(requestEntry(call, message, answered));
    }
  }
  return entries;
}

/** A request told by the tool result that answered it (`metadata.answeredRequest`, or a `request_user_input` result of an older store). */
function requestEntry(
  call: Extract<TimelineEntry, { kind: 'tool' }>,
  result: Message,
  answered: AnsweredRequest | undefined,
): TimelineEntry {
  const base = {
    agent: call.agent,
    toolCallId: call.toolCallId,
    conversationRef: { branchId: '', throughSeq: call.seq },
  };
  const id = answered?.id ?? call.toolCallId;
  const createdAt = answered?.createdAt ?? call.at;
  if (answered?.type === 'tool_approval') {
    const request: Request = {
      ...base,
      type: 'tool_approval',
      id,
      createdAt,
      toolName: call.toolName,
      arguments: call.arguments,
    };
    const approved = answered.always === 'session' ? 'approved, always for this session' : 'approved';
    const rejected = `rejected${answered.reason === undefined ? '' : `: ${answered.reason}`}`;
    const answer = answered.approved === false ? rejected : approved;
    return { kind: 'request', at: createdAt, seq: call.seq, request, answer };
  }
  const request: Request = { ...base, type: 'user_input', id, createdAt, prompt: promptOf(call.arguments) };
  return { kind: 'request', at: createdAt, seq: call.seq, request, answer: result.content };
}

/** Entries told from messages with checkpoint-placed ones, each placed after the message its `seq` names (ties: messages first). */
function merge(told: TimelineEntry[], placed: TimelineEntry[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  let j = 0;
  for (let i = 0; i < told.length; i += 1) {
    while (j < placed.length && placed[j]!.seq < told[i]!.seq) out.push(placed[j++]!);
    out.push(told[i]!);
  }
  while (j < placed.length) out.push(placed[j++]!);
  return out;
}

/**
 * The entries sorted by `at` (stable: entries of the same instant keep the order they were told
 * in). A request is told where its answer was read but happened when it was asked, and a pending
 * request where a checkpoint kept it; sorting puts each where it happened.
 */
function inTimeOrder(entries: TimelineEntry[]): TimelineEntry[] {
  let last = Number.NEGATIVE_INFINITY;
  const times = entries.map((e) => {
    const t = Date.parse(e.at);
    if (!Number.isNaN(t)) last = t;
    return last;
  });
  return entries
    .map((entry, i) => ({ entry, i }))
    .sort((a, b) => times[a.i]! - times[b.i]! || a.i - b.i)
    .map(({ entry }) => entry);
}

/** Numbers the turns in order: each user message and each answered request starts one. */
function numberTurns(entries: TimelineEntry[]): TimelineEntry[] {
  let turn = 0;
  return entries.map((entry) => {
    if (entry.kind === 'turn') return { ...entry, turn: ++turn };
    if (entry.kind === 'request' && entry.answer !== undefined) return { ...entry, turn: ++turn };
    return entry;
  });
}

function withAnswer(entry: Extract<TimelineEntry, { kind: 'request' }>, answer: string | undefined): TimelineEntry {
  return answer === undefined ? entry : { ...entry, answer };
}

/** How a request was answered, read from the tool result (or operator message) that answered it. */
function describeAnswer(
  request: Request,
  result: Message | undefined,
  messages: readonly Message[],
): string | undefined {
  if (request.type === 'human_step') {
    const reply = messages.find((m) => m.role === 'assistant' && m.metadata?.humanStep === request.stepId);
    return reply?.content;
  }
  if (result === undefined) return undefined;
  if (request.type === 'user_input') return result.content;
  return result.isError === true ? `rejected: ${result.content}` : 'approved';
}

function parseArguments(text: string | undefined): Record<string, unknown> {
  try {
    const value = JSON.parse(text ?? '{}') as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function reasonOf(args: string | undefined): string | undefined {
  const reason = parseArguments(args).reason;
  return typeof reason === 'string' && reason !== '' ? reason : undefined;
}

function promptOf(args: string): string {
  const prompt = parseArguments(args).prompt;
  return typeof prompt === 'string' ? prompt : '';
}
