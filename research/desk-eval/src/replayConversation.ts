import { createHash } from 'node:crypto';
import { type ApprovalDecision, type BatonEvent, isValidId, type Request } from '@baton/core';
import { TRIAGE } from '@baton/example-support-desk/desk/specialists.js';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import { type AbcdConversation, customerMessages, flowInReason } from '@baton/support-desk-models';
import type { ModelClock } from './timedModel.js';

/** The part of a Baton session the replay drives (a `HandoffSession` has it). */
export interface ReplaySession {
  /** Requests the turn is paused on, oldest first. */
  readonly pendingRequests: readonly Request[];
  /** Sends a customer message; the events of the turn. */
  send(text: string): AsyncIterable<BatonEvent>;
  /** Answers a pending request: text for `user_input`, a decision for `tool_approval`; the events of the turn. */
  respond(requestId: string, answer: string | ApprovalDecision): AsyncIterable<BatonEvent>;
  /** Closes the session (context providers' `onSessionClose` run, e.g. the episode is saved). */
  close(options: { reason?: string }): Promise<void>;
}

/** Opens (loads or creates) the session of a conversation, on a freshly built workflow when `fresh` is set. */
export type OpenSession = (options: { id: string; userId: string; fresh: boolean }) => Promise<ReplaySession>;

/** Counts of one replayed conversation (everything here is deterministic). */
export interface ReplayCounts {
  /** `send`/`respond` calls: customer messages sent or answering a request, and approval answers. */
  turns: number;
  handoffs: number;
  userInputRequests: number;
  approvalRequests: number;
  approvals: number;
  rejections: number;
  checkpoints: number;
  toolCalls: number;
  toolErrors: number;
  /** Customer messages that answered a pending `user_input` request. */
  answers: number;
  /** Questions triage asked before it routed (`request_user_input` by the coordinator). */
  clarifyingQuestions: number;
  /** Tokens the models reported (`turn.completed` usage; 0 for the offline models, which call no provider). */
  tokens: number;
  restarts: number;
}

/** What replaying one conversation gives. */
export interface ConversationOutcome extends ReplayCounts {
  id: string;
  flow: string;
  subflow: string;
  /** The first specialist triage handed off to (`null`: none). */
  routedTo: string | null;
  /** The flow named in that handoff's reason (`null`: none). */
  predictedFlow: string | null;
  /** The flow named by the last handoff whose reason named one (a specialist's hand-back, passed on by triage, names the flow it corrects to; `null`: none). */
  finalFlow: string | null;
  /** The confidence triage gave in that handoff's reason (`confidence 0.93`; `null`: none given). */
  routingConfidence: number | null;
  /** The last case a specialist named (`case <subflow>` in a reply or an `end_conversation` reason, or a question's `case` argument; `null`: none). */
  predictedSubflow: string | null;
  /** The console actions the specialists ran successfully, in order. */
  actions: string[];
  /** Whether a specialist closed the session with `end_conversation` (the rest of the customer's messages, if any, were not sent). */
  closedByDesk: boolean;
  /** Wall time of all `send`/`respond` calls, in milliseconds. */
  wallMs: number;
  /** Part of `wallMs` spent inside model calls. */
  modelMs: number;
  /** Why the conversation stopped early (`"<error name>: <message>"`), or `null` when every message was replayed. */
  failure: string | null;
}

/** Options of {@link replayConversation}. */
export interface ReplayConversationOptions {
  open: OpenSession;
  /** The clock every model of the workflow is timed on. */
  clock: ModelClock;
  /** The flows a handoff reason may name. */
  flows: readonly string[];
  /** The subflows a specialist's case may name (default: none are recognised). */
  subflows?: readonly string[];
  /** Rebuild the workflow and session from the store before every N-th customer message (0: never). */
  restartEvery?: number;
  /** Decides approval requests (default: approve). */
  decide?: (request: Request & { type: 'tool_approval' }) => ApprovalDecision;
  /** Called with every event, in order. */
  onEvent?: (event: BatonEvent) => void;
  /** The session id (default: {@link sessionIdFor} the conversation id). */
  sessionId?: string;
}

/**
 * Replays one ABCD conversation through a Baton session: each customer message is sent, or answers
 * the pending `user_input` request; approval requests are answered by `decide`; at the end the
 * session is closed (which saves the episode when memory is configured).
 *
 * @param conversation the ABCD conversation: its customer turns are replayed, the agent turns are not
 * @param options `{ open, clock, flows, restartEvery?, decide?, onEvent?, sessionId? }`
 * @returns the conversation's routing outcome, counts and timings (milliseconds); a failed turn ends
 *   the conversation and is reported in `failure`, not thrown
 * @throws the errors of the first `open` and of the final `close` (a failed reopen on restart counts as a failed turn)
 * @example
 * ```ts
 * const outcome = await replayConversation(conversation, { open, clock, flows: ontology.flows });
 * ```
 */
export async function replayConversation(
  conversation: AbcdConversation,
  options: ReplayConversationOptions,
): Promise<ConversationOutcome> {
  const id = options.sessionId ?? sessionIdFor(conversation.id);
  const counts: ReplayCounts = {
    turns: 0,
    handoffs: 0,
    userInputRequests: 0,
    approvalRequests: 0,
    approvals: 0,
    rejections: 0,
    checkpoints: 0,
    toolCalls: 0,
    toolErrors: 0,
    answers: 0,
    clarifyingQuestions: 0,
    tokens: 0,
    restarts: 0,
  };
  const outcome = {
    routedTo: null as string | null,
    predictedFlow: null as string | null,
    finalFlow: null as string | null,
    routingConfidence: null as number | null,
    predictedSubflow: null as string | null,
    actions: [] as string[],
    closedByDesk: false,
    wallMs: 0,
    modelMs: 0,
  };
  const nameCase = (text: string | undefined) => {
    const named = caseInText(text, options.subflows ?? []);
    if (named !== undefined) outcome.predictedSubflow = named;
  };
  const decide = options.decide ?? (() => ({ approved: true }) as const);

  const run = async (events: AsyncIterable<BatonEvent>) => {
    counts.turns += 1;
    const modelBefore = options.clock.elapsedMs;
    const started = performance.now();
    for await (const event of events) {
      options.onEvent?.(event);
      switch (event.type) {
        case 'handoff':
          counts.handoffs += 1;
          if (event.from === TRIAGE) outcome.finalFlow = flowInReason(event.reason, options.flows) ?? outcome.finalFlow;
          if (outcome.routedTo === null && event.from === TRIAGE) {
            outcome.routedTo = event.to;
            outcome.predictedFlow = flowInReason(event.reason, options.flows) ?? null;
            const confidence = /\bconfidence (\d(?:\.\d+)?)/.exec(event.reason ?? '')?.[1];
            outcome.routingConfidence = confidence === undefined ? null : Number(confidence);
          }
          break;
        case 'request':
          if (event.request.type === 'user_input') {
            counts.userInputRequests += 1;
            if (event.request.agent === TRIAGE) counts.clarifyingQuestions += 1;
          } else counts.approvalRequests += 1;
          break;
        case 'message':
          if (event.message.role === 'assistant' && event.message.agent !== TRIAGE) {
            nameCase(event.message.content);
            for (const call of event.message.toolCalls ?? []) {
              if (call.name === 'end_conversation') nameCase(call.arguments);
              else if (call.name === REQUEST_USER_INPUT) nameCase(caseOfQuestion(call.arguments));
            }
          }
          break;
        case 'turn.completed':
          counts.tokens += event.usage.totalTokens;
          break;
        case 'session.closed':
          outcome.closedByDesk = true;
          break;
        case 'checkpoint':
          counts.checkpoints += 1;
          break;
        case 'tool.result':
          counts.toolCalls += 1;
          if (event.isError) counts.toolErrors += 1;
          else if (
            event.agent !== TRIAGE &&
            !NOT_ACTIONS.has(event.toolName) &&
            !event.toolName.startsWith('handoff_to_')
          )
            outcome.actions.push(event.toolName);
          break;
      }
    }
    outcome.wallMs += performance.now() - started;
    outcome.modelMs += options.clock.elapsedMs - modelBefore;
  };

  let session = await options.open({ id, userId: userOf(conversation), fresh: true });
  const approvePending = async () => {
    for (;;) {
      const approval = session.pendingRequests.find(
        (r): r is Request & { type: 'tool_approval' } => r.type === 'tool_approval',
      );
      if (approval === undefined) return;
      const decision = decide(approval);
      if (decision.approved) counts.approvals += 1;
      else counts.rejections += 1;
      await run(session.respond(approval.id, decision));
    }
  };

  let failure: string | null = null;
  try {
    for (const [index, text] of customerMessages(conversation).entries()) {
      if (outcome.closedByDesk) break;
      if (options.restartEvery && index > 0 && index % options.restartEvery === 0) {
        session = await options.open({ id, userId: userOf(conversation), fresh: true });
        counts.restarts += 1;
      }
      const question = session.pendingRequests.find((r) => r.type === 'user_input');
      if (question !== undefined) {
        counts.answers += 1;
        await run(session.respond(question.id, text));
      } else {
        await run(session.send(text));
      }
      await approvePending();
    }
  } catch (error) {
    // A failed turn (e.g. a model provider's error after retries) ends this conversation, not the replay.
    failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  if (!outcome.closedByDesk)
    await session.close({
      reason: failure === null ? 'replay: the customer has no more messages' : 'replay: a turn failed',
    });
  return {
    id: conversation.id,
    flow: conversation.flow,
    subflow: conversation.subflow,
    ...counts,
    ...outcome,
    failure,
  };
}

/** Tool calls that are no console action. */
const NOT_ACTIONS = new Set(['request_user_input', 'end_conversation']);

/**
 * The case a specialist's question names as the one it works on so far (`request_user_input`'s
 * `case` argument, in `case <subflow>` form), or `undefined` when it names none or its arguments are not JSON.
 * @example
 * ```ts
 * caseOfQuestion('{"prompt":"May I have your order ID?","case":"refund_initiate"}'); // 'case refund_initiate'
 * ```
 */
export function caseOfQuestion(args: string): string | undefined {
  try {
    const parsed = JSON.parse(args) as { case?: unknown };
    return typeof parsed.case === 'string' ? `case ${parsed.case}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The subflow a specialist named as its case in a text (`case refund_initiate`), or `undefined`.
 *
 * @param subflows the subflows it may name
 * @example
 * ```ts
 * caseInText('I have refunded $40. (case refund_initiate)', ontologySubflows); // 'refund_initiate'
 * ```
 */
export function caseInText(text: string | undefined, subflows: readonly string[]): string | undefined {
  const named = text === undefined ? undefined : /\bcase ([a-z0-9_]+)/.exec(text)?.[1];
  return named !== undefined && subflows.includes(named) ? named : undefined;
}

/**
 * Whether a conversation's expected action sequence (kb.json's, for its true subflow) ran in order:
 * the sequence is a subsequence of the actions run (other actions may come between).
 *
 * @example
 * ```ts
 * ranInOrder(['pull-up-account', 'verify-identity'], ['pull-up-account', 'ask-the-oracle', 'verify-identity']); // true
 * ```
 */
export function ranInOrder(expected: readonly string[], actions: readonly string[]): boolean {
  let next = 0;
  for (const action of actions) if (action === expected[next]) next += 1;
  return expected.length > 0 && next === expected.length;
}

/**
 * The user a conversation's customer is (a stable id from the conversation id).
 * @returns `customer-<conversation id>`, made safe as {@link sessionIdFor} does
 */
export function userOf(conversation: AbcdConversation): string {
  return sessionIdFor(`customer-${conversation.id}`);
}

/**
 * The session id of a conversation: its id when that is a safe Baton id (ABCD's are), otherwise
 * `conversation-<first 24 hex digits of its sha256>`, so any file of the format can be replayed.
 *
 * @example
 * ```ts
 * sessionIdFor('abcd-dev-0061'); // 'abcd-dev-0061'
 * sessionIdFor('my chat #1'); // 'conversation-' + 24 hex digits
 * ```
 */
export function sessionIdFor(conversationId: string): string {
  return isValidId(conversationId)
    ? conversationId
    : `conversation-${createHash('sha256').update(conversationId).digest('hex').slice(0, 24)}`;
}
