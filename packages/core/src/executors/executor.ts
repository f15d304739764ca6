import type { Tool } from '../agents/tool.js';
import type { ApprovalGrantLookup } from '../conversation/approvalGrant.js';
import type { PendingWrite } from '../conversation/checkpoint.js';
import type { BatonEvent } from '../conversation/events.js';
import type { Message, ModelMessage, NewMessage } from '../conversation/message.js';
import type { ApprovalDecision, HumanStepAnswer, NewRequest, Request } from '../conversation/request.js';
import type { StateAccess } from '../conversation/state.js';
import type { SessionAssets } from '../store/assets/sessionAssets.js';
import type { ModelSettings, Usage } from '../models/modelClient.js';
import type { EventSink, ReadySignal } from './eventChannel.js';

/**
 * How an executor records what it produces. The runtime (e.g. a handoff session) implements it
 * over a store, so an executor never touches storage itself.
 */
export interface ExecutorJournal {
  /**
   * Adds messages to the branch in order and returns them with `id`, `seq` and `createdAt`
   * assigned. Called with an assistant message as soon as the model answers, and with a step's
   * tool results, in call order, once all of them are known. A runtime may store them at once or
   * at its next durability point (the handoff runtime writes behind: before a checkpoint, before a
   * non-handoff tool runs, at turn end).
   */
  commit(messages: readonly NewMessage[]): Promise<Message[]>;
  /** Saves one finished tool result before its sibling calls finish (crash safety). */
  recordPendingWrite(write: PendingWrite): Promise<void>;
  /** Tool results finished by an earlier, interrupted attempt at the current step, by tool call id. */
  readonly pendingWrites: ReadonlyMap<string, PendingWrite>;
}

/** What an executor gets for one activation. */
export interface ExecutorInput {
  sessionId: string;
  branchId: string;
  turn: number;
  /**
   * The branch's history as this executor should see it, oldest first. It ends with the new user
   * message, or with an assistant message whose tool calls are not all answered yet (a resumed step:
   * the executor answers them first, using `journal.pendingWrites` and `approvals`).
   */
  history: readonly Message[];
  /** Context messages to put after the instructions (recalled memory); not stored history. */
  context?: readonly ModelMessage[];
  /** Tools the runtime adds to the agent's own: handoffs, `request_user_input`. */
  tools?: readonly Tool[];
  /** Decisions on pending `tool_approval` requests, by tool call id. */
  approvals?: ReadonlyMap<string, ApprovalDecision>;
  /**
   * Standing approvals ("always allow"): a call of a tool that needs approval, with no decision in
   * `approvals`, runs without a request when this gives a grant for its tool, and its result records
   * the grant. Absent: every such call asks.
   */
  approvalGrant?: ApprovalGrantLookup;
  /** Operators' answers to this participant's pending `human_step` requests, by step id. */
  humanAnswers?: ReadonlyMap<string, HumanStepAnswer>;
  /** Shapes each model input (e.g. working memory trimming to a token budget). Default: identity. */
  prepareModelInput?: (messages: readonly ModelMessage[]) => readonly ModelMessage[] | Promise<readonly ModelMessage[]>;
  journal: ExecutorJournal;
  state: StateAccess;
  /** The session's assets, when the runtime's store keeps them; tools see them as `context.assets`. */
  assets?: SessionAssets;
  signal: AbortSignal;
  /** Settings the caller gave for this turn only (extra instructions, model settings, a tool filter). */
  turnSettings?: TurnSettings;
  /**
   * The whole branch as the runtime holds it (handoff tool calls included) and a fresh agent view of
   * it, both live: they grow as the journal commits. For executors that run several agents in one
   * activation and derive where they stand from stored messages (a nested workflow,
   * `workflow.asExecutor()` in `@baton/handoff`). Absent when the runtime offers none.
   */
  branchHistory?: BranchHistory;
  /**
   * For {@link Executor.run}: resolves when the caller has read every event emitted so far and
   * wants more (where a generator would resume after a `yield`); `undefined` when it can go on at
   * once. `run` awaits it before each side effect (a model call, a tool, a commit) and, when the
   * call can be cancelled (a `signal` other than `NEVER_ABORTED`), after each `message.delta`, so a
   * caller that stops reading stops the activation there (it then rejects; let that propagate) and
   * one that cancels on an event sees no later event. Absent: never wait.
   */
  ready?: ReadySignal;
  /**
   * Runs `fn` (a model call's `stream` and each read of it, a tool call) in the context the runtime
   * wants outside calls to run in: with tracing, the innermost open span (the model call's `chat`
   * span, the tool's `execute_tool` span, under the agent's `invoke_agent` span), so instrumented
   * clients nest under it. Absent: `fn` runs in the caller's context.
   * @returns what `fn` returns
   */
  within?: <T>(fn: () => T) => T;
}

/** A live view of a branch's committed history (see {@link ExecutorInput.branchHistory}). */
export interface BranchHistory {
  /** Every committed message of the branch, oldest first, handoff calls and results included. */
  readonly messages: readonly Message[];
  /** The history an agent sees now (the runtime's handoff-history mode applied). */
  forAgent(): readonly Message[];
}

/**
 * Per-turn settings a caller passes with one call (`session.send(text, { instructions, … })`,
 * `workflow.run({ … })`); they apply to every agent of that turn and to nothing after it.
 */
export interface TurnSettings {
  /** Added after each agent's own instructions, as a second system message. */
  instructions?: string;
  /** Sampling settings for every model call of the turn (they win over the model client's options). */
  modelSettings?: ModelSettings;
  /**
   * Which of an agent's own tools it may use in this turn (handoffs and `request_user_input` stay):
   * a list of tool names, or a predicate.
   */
  tools?: readonly string[] | ((toolName: string, agent: string) => boolean);
}

/**
 * How an activation ended: a reply to the user (with its parsed `structuredOutput` when the agent
 * has an `outputType`), a handoff, requests that pause the turn, or the end of the conversation.
 */
export type ExecutorOutcome =
  | { type: 'reply'; message: Message; usage: Usage; structuredOutput?: unknown }
  | { type: 'handoff'; target: string; reason?: string; usage: Usage }
  | { type: 'requests'; requests: NewRequest[]; usage: Usage }
  | { type: 'end_conversation'; reason: string; usage: Usage };

/**
 * Anything that can take part in a conversation: an `AgentExecutor` (model and tools), a rule-based
 * bot, a remote service, a human queue. `execute` yields events as it works and returns its outcome.
 *
 * @example
 * ```ts
 * import type { Executor } from '@baton/core';
 * const echo: Executor = {
 *   name: 'echo', description: 'Repeats the user.',
 *   async *execute(input) {
 *     const last = input.history.at(-1)?.content ?? '';
 *     const [message] = await input.journal.commit([{ role: 'assistant', agent: 'echo', content: last }]);
 *     return { type: 'reply', message: message!, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 } };
 *   },
 * };
 * ```
 */
export interface Executor {
  /** Unique among participants; used in `handoff_to_<name>`. */
  readonly name: string;
  /** What other agents see when they may hand off to it. */
  readonly description: string;
  /**
   * Runs one activation: yields events as it works (`message.delta`, `message`, `tool.call`,
   * `tool.result`, …), commits what it produces through `input.journal`, and returns how it ended.
   * @param input the history, extra tools, journal, state and signal for this activation
   * @returns `reply`, `handoff`, `requests` or `end_conversation`, with the usage of the activation
   * @throws {MaxStepsExceededError | AbortedError} and what the model client or journal throws
   */
  execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void>;
  /**
   * The same activation as {@link execute}, emitting its events (the same ones, in the same order)
   * into `emit` instead of yielding them: a runtime that has it (the handoff turn does) passes events
   * through one sink instead of a generator per layer. It awaits `input.ready` before each side
   * effect and runs outside calls through `input.within`. Optional: without it, `execute` is used
   * (as it is for an `AgentExecutor` subclass that overrides `execute` but not `run`).
   * @param input as for `execute`
   * @param emit receives each event synchronously; it throws when the caller stopped reading (let that propagate)
   * @returns how the activation ended, as `execute` returns it
   * @throws what `execute` throws
   */
  run?(input: ExecutorInput, emit: EventSink): Promise<ExecutorOutcome>;
  /**
   * Called when this participant's pending requests are dropped unanswered (the turn was
   * discarded, the session closed from any branch or by the idle sweep given `participants`), after
   * the drop is stored, or before the session is erased (`workflow.eraseUser`), so the executor can
   * withdraw what it put outside Baton for them (`HumanExecutor` removes their tasks from its queue). Optional.
   * @param requests the dropped requests of this participant
   */
  withdrawRequests?(requests: readonly Request[]): Promise<void>;

  /**
   * Checks arguments a human edited while approving a `tool_approval` request of this participant
   * (`respond(id, { approved: true, arguments })`), before the turn goes on. Optional: without it,
   * the edited arguments are checked when the tool runs (a failure is then an error result).
   * @throws {InvalidInputError} when they fail the tool's schema; the request stays pending
   */
  validateApprovedArguments?(toolName: string, args: Record<string, unknown>): Promise<void>;
}
