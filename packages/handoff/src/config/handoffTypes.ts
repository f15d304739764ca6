import type {
  Agent,
  AssetRef,
  BatonEvent,
  ContextProvider,
  Executor,
  Logger,
  Message,
  Request,
  Session,
  Store,
  TurnSettings,
  Usage,
} from '@baton/core';
import type { InspectionEvent, Observer } from 'xstate';
import type { HistoryWindow } from './historyWindow.js';
import type { TelemetryOptions } from './telemetryOptions.js';

/** Where the next turn starts after a specialist answers the user: at the coordinator, or with that specialist. */
export type ReturnPolicy = 'coordinator' | 'previous';

/** A participant: an {@link Agent} (run by core's `AgentExecutor`) or any {@link Executor}. */
export type Participant = Agent | Executor;

/**
 * When checkpoints are saved (see the package README, "Checkpoints and recovery"):
 * - `'turn'` (default): at the end of every turn, plus the mandatory ones;
 * - `'step'`: after every commit (the user message, each model answer, each step's tool results), plus the mandatory ones;
 * - `'manual'`: only the mandatory ones and `session.checkpoint()`.
 * Mandatory in every mode: right after an assistant message with tool calls other than handoffs is
 * committed (pending writes attach to it; handoff tools are pure and are simply run again after a
 * crash) and when the turn pauses on requests. Messages are written behind and stored with one
 * `appendMessages` before each checkpoint and at turn end, so `'turn'` and `'manual'` store a
 * handoff turn's messages in one write; `'step'` stores each commit before its checkpoint.
 */
export type CheckpointFrequency = 'turn' | 'step' | 'manual';

/**
 * Which checkpoints a branch keeps: `'latest'`, `'all'`, or `{ last?, maxAgeMs? }` (the newest
 * `last`, and/or those younger than `maxAgeMs` milliseconds). The newest is always kept, and it is
 * the one a session loads. Pruning is amortised: with `last: N` the branch is pruned back to N once
 * every N checkpoints, so up to 2N − 1 exist between prunes; with `maxAgeMs` a session object
 * prunes at most once per max(1 s, maxAgeMs / 10).
 */
export type CheckpointKeep = 'latest' | 'all' | { last?: number; maxAgeMs?: number };

/** `{ every?, keep? }`: checkpoint frequency (default `'turn'`) and retention (default `{ last: 5 }`). */
export interface CheckpointOptions {
  every?: CheckpointFrequency;
  keep?: CheckpointKeep;
}

/** Autonomous mode: after an agent answers, the next turn starts by itself (no user in between) until `maxTurns` turns ran in one call. */
export interface AutonomousOptions {
  /** Turns one `send`/`respond` may run, the first included (≥ 1). */
  maxTurns: number;
  /** The text of the user message that starts each autonomous turn (stored with `metadata.autonomous = true`). */
  prompt?: string;
}

/** What a termination condition sees after an agent answered the user. */
export interface TerminationContext {
  session: Readonly<Session>;
  branchId: string;
  /** The answer that ended the turn. */
  message: Message;
  /** The branch's whole history, oldest first (do not change it). */
  messages: readonly Message[];
  turn: number;
  agent: string;
}

/**
 * Decides after every answer whether the conversation is over. `true` or a string (the reason)
 * closes the session; `false`/`undefined` goes on.
 */
export type TerminationCondition = (
  context: TerminationContext,
) => boolean | string | undefined | Promise<boolean | string | undefined>;

/** Whether the receiving agent's input shows earlier handoff tool calls and their results (`'keep'`) or leaves them out (`'omit'`, default). Stored history always keeps them. */
export type HandoffHistoryMode = 'omit' | 'keep';

/**
 * Which session `workflow.session()` opens: by its `id` (1–128 of `A–Z a–z 0–9 _ - : .`), or by the
 * `conversationId` of a conversation several workflows may share — then the session is this
 * workflow's thread of that conversation, stored under `workflow.sessionIdOf(conversationId)`
 * (`<workflow name>:<conversationId>`), so two workflows on one store and one conversation id never
 * collide (the thread store of Microsoft Agent Framework keys threads the same way, by conversation
 * and agent).
 */
export type SessionTarget = { id: string; conversationId?: never } | { conversationId: string; id?: never };

/** What `workflow.session()` takes: a {@link SessionTarget} and {@link SessionSettings}. */
export type SessionOptions = SessionTarget & SessionSettings;

/** The options of `workflow.session()` besides which session it opens. */
export interface SessionSettings {
  userId?: string;
  tenantId?: string;
  /** The branch to work on (default `'main'`); it must exist (create one with `session.fork`). */
  branch?: string;
  /** Metadata for a new session. */
  metadata?: Record<string, unknown>;
  /** Load from this checkpoint instead of the newest (explicit recovery, as `session.restore(checkpointId)`). */
  checkpointId?: string;
  /**
   * Whether an unknown id creates a session (`true`, the default: get-or-create) or is refused with
   * `NotFoundError` (`false`: a typo in an id does not silently start a new conversation).
   */
  create?: boolean;
}

/**
 * An answer to a pending request: text for `user_input`; `{ approved: true }` (with edited
 * `arguments` the tool runs with instead of the model's, validated against its schema; with
 * `always: 'session'`, "always allow": later calls of the tool in this session run without asking,
 * until `session.revokeApproval(toolName)`) or `{ approved: false, reason? }` for `tool_approval`;
 * for `human_step`, the operator's reply (text or `{ reply }`) or `{ handoff, reason? }`.
 */
export type RequestAnswer =
  | string
  | { approved: true; arguments?: Record<string, unknown>; always?: 'session' }
  | { approved: false; reason?: string }
  | { reply: string }
  | { handoff: string; reason?: string };

/**
 * Options of every call that runs a turn: a cancellation signal, and settings for this turn only
 * (extra instructions, model settings, a tool filter: see core's `TurnSettings`).
 *
 * @example
 * ```ts
 * session.send('Summarise my orders', { instructions: 'Answer in French.', modelSettings: { temperature: 0 }, tools: ['look_up_order'] });
 * ```
 */
export interface TurnOptions extends TurnSettings {
  /** Cancels the turn; the unfinished turn is resumed by the next call. */
  signal?: AbortSignal;
}

/**
 * Options of `session.send`: those of every turn, and the assets (uploaded files) the user's
 * message refers to. The message keeps their references in `metadata.assets` (never the bytes);
 * the model sees one line per asset after the text, and tools read the bytes through `context.assets`.
 *
 * @example
 * ```ts
 * const receipt = await session.attach({ name: 'receipt.png', contentType: 'image/png', bytes });
 * await session.send('Here is the receipt for order 42', { assets: [receipt] });
 * ```
 */
export interface SendOptions extends TurnOptions {
  /** References from `session.attach` (or `store.putAsset`) of this session. */
  assets?: readonly AssetRef[];
}

/** The workflow's settled configuration, as {@link HandoffBuilder} builds it. */
export interface HandoffConfig {
  name: string;
  participants: ReadonlyMap<string, Executor>;
  coordinator: string;
  edges: ReadonlyMap<string, ReadonlySet<string>>;
  returnPolicy: ReturnPolicy;
  returnOverrides: ReadonlyMap<string, ReturnPolicy>;
  maxHandoffsPerTurn: number;
  autonomous: Required<AutonomousOptions> | undefined;
  terminateWhen: TerminationCondition | undefined;
  store: Store;
  checkpointEvery: CheckpointFrequency;
  checkpointKeep: CheckpointKeep;
  contextProviders: readonly ContextProvider[];
  handoffHistory: HandoffHistoryMode;
  /** The model input's bounded history, when set (`historyWindow()`); `undefined`: the whole history. */
  historyWindow: HistoryWindow | undefined;
  inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /**
   * The builder calls of options that belong to the workflow's own sessions, set explicitly
   * (`'store()'`, `'checkpoints()'`, `'memory()/contextProviders()'`, `'autonomous()'`,
   * `'terminateWhen()'`, `'handoffHistory()'`, `'historyWindow()'`): a nested workflow (`asExecutor()`) runs in the outer
   * session and refuses them.
   */
  sessionOptions: readonly string[];
  /** OpenTelemetry tracing of turns (`{}`: the global tracer, contents off). */
  telemetry: TelemetryOptions;
  /** Where recoveries, failed turns and refused handoffs are logged (default: silent). */
  logger: Logger;
}

/**
 * What `workflow.run({ sessionId | conversationId, input })` takes: the session to load or create
 * (by its id, or as this workflow's thread of a conversation: see `workflow.sessionIdOf`), the user's
 * input, and the options of the call (signal and per-turn settings).
 */
export type HandoffRunRequest = (
  | { sessionId: string; conversationId?: never }
  | { conversationId: string; sessionId?: never }
) &
  HandoffRunOptions;

/** The options of `workflow.run({ … })` besides which session it runs in. */
export interface HandoffRunOptions extends TurnOptions {
  /** The user's message, or several messages sent in a row (committed together). While one `user_input` request is pending, it answers it. */
  input: string | readonly string[];
  /** The branch (default `'main'`; required once the session has been forked). */
  branch?: string;
  userId?: string;
  tenantId?: string;
  /** `false` refuses an unknown `sessionId` with `NotFoundError` instead of creating it. */
  create?: boolean;
}

/** What {@link HandoffWorkflow.run} returns. */
export interface HandoffRunResult {
  /** The id of the session it ran in (a throwaway one for the stateless form). */
  sessionId: string;
  /** The text of the last answer to the user, if the turn ended with one. */
  output: string | undefined;
  /** The agent that gave it. */
  agent: string | undefined;
  /**
   * That answer parsed and validated, when its agent has an `outputType` (structured output);
   * `undefined` otherwise. Type it with `AgentOutput<typeof agent>` from `@baton/core`.
   */
  structuredOutput: unknown;
  /** Every message the call committed, oldest first. */
  messages: readonly Message[];
  /** Requests the run paused on (the stateless form cannot be resumed; by id, answer them with another `run` or a session). */
  pendingRequests: readonly Request[];
  /** Every event, in order. */
  events: readonly BatonEvent[];
  /** Model usage of the run. */
  usage: Usage;
}
