import type { Store } from '../store/store.js';
import type { Message, ModelMessage } from './message.js';
import type { ProviderState } from './providerState.js';
import type { Session } from './session.js';

/** What a context provider learns before a turn. */
export interface BeforeTurnArgs {
  session: Session;
  branchId: string;
  /** The new user message's text. */
  input: string;
  store: Store;
  signal: AbortSignal;
  /**
   * The provider's own slice of session and branch state ({@link ProviderState}), kept with the
   * session. The handoff runtime always gives it; a caller outside a runtime may not.
   */
  state?: ProviderState;
}

/** Where a model input is being shaped: the session branch, and the provider's own state there. */
export interface ModelInputContext {
  sessionId: string;
  branchId: string;
  /** The provider's own slice of session and branch state ({@link ProviderState}), kept with the session. */
  state: ProviderState;
}

/** What a context provider learns before one agent's activation: the turn's arguments and the agent about to act. */
export interface BeforeActivationArgs extends BeforeTurnArgs {
  /** The participant about to act (an agent's name), e.g. `'billing'` after a handoff to it. */
  agent: string;
}

/** What a context provider learns when a session closes. */
export interface SessionCloseArgs {
  session: Session;
  reason: string;
  /** The `main` branch's committed messages. */
  messages: readonly Message[];
  /** The agents that took part, in order of first appearance. */
  agents: readonly string[];
  store: Store;
}

/**
 * The contract through which memory (or anything else) plugs into a runtime without either
 * importing the other (docs/architecture.md "Memory"). Every hook is optional.
 *
 * State a provider keeps between calls (a cache, a counter) belongs in `state`, its own slice of
 * the session's state (`provider:<name>` in the session and branch documents; see
 * {@link ProviderState}), not in the provider object: the store keeps it, checkpoints carry its
 * changes, a restarted process finds it, a fork starts from the branch slice as of its fork point,
 * and deleting the session deletes it. Each slice is bounded by `maxStateBytes` of JSON (default
 * 64 KiB). Names must be unique among a workflow's providers.
 *
 * @example
 * ```ts
 * import type { ContextProvider } from '@baton/core';
 * const clock: ContextProvider = {
 *   name: 'clock',
 *   beforeTurn: async () => [{ role: 'context', content: `Now: ${new Date().toISOString()}` }],
 * };
 * ```
 */
export interface ContextProvider {
  /** Unique among a workflow's providers; keys its state (`provider:<name>`), so no `.` and no leading `$`. */
  readonly name: string;
  /** The bound of each of its state slices, in bytes of JSON (default `DEFAULT_PROVIDER_STATE_MAX_BYTES`, 64 KiB). */
  readonly maxStateBytes?: number;
  /**
   * Context for this turn's model inputs (e.g. recalled episodes), as `context` messages. The agent
   * loop puts them just before the newest user message, so the history before it keeps its place
   * from turn to turn (a stable prefix for prompt caching); they are never stored.
   */
  beforeTurn?(args: BeforeTurnArgs): Promise<readonly ModelMessage[] | undefined>;
  /**
   * Context for one activation of one agent (e.g. the knowledge that agent may consult), as `context`
   * messages: called before every activation of the turn (the coordinator's, then each agent handed
   * off to), after `beforeTurn`. They follow the turn's context in that agent's model inputs only,
   * and are never stored.
   */
  beforeActivation?(args: BeforeActivationArgs): Promise<readonly ModelMessage[] | undefined>;
  /**
   * Shapes every model input (e.g. trims history to a token budget). Must keep a tool call with its
   * result. The handoff runtime passes `context` (the session branch and the provider's state).
   */
  prepareModelInput?(
    messages: readonly ModelMessage[],
    context?: ModelInputContext,
  ): readonly ModelMessage[] | Promise<readonly ModelMessage[]>;
  /**
   * A bound on the history any model input shaped by {@link prepareModelInput} keeps: at most this
   * many of the newest history messages (an integer ≥ 1), whatever the history holds; `undefined`
   * (the default) when it may keep any message (e.g. a pinned first message, a summary of the rest).
   * When this provider shapes first, the handoff runtime opens a session by reading only that part
   * of the branch (at least this many messages agents see), so opening a long conversation costs
   * what its window costs; the model input is the same as with the whole history read.
   * @example
   * ```ts
   * const lastTwenty: ContextProvider = {
   *   name: 'last-twenty',
   *   maxHistoryMessages: 20,
   *   prepareModelInput: (messages) => [...messages.filter((m) => m.role === 'system'), ...messages.filter((m) => m.role !== 'system').slice(-20)],
   * };
   * ```
   */
  readonly maxHistoryMessages?: number | undefined;
  /**
   * How much older history the model inputs shaped by {@link prepareModelInput} may still need, given
   * only the newest part of a history (e.g. what a token budget can keep): `newest` is that part as
   * model messages, oldest first, the older ones unread. `0`: there is a point in `newest` before
   * which no input keeps a message, and from which on every input is the same whatever precedes it
   * (histories hold no `system` or `context` messages of their own: the agent loop adds those), also
   * after more messages are appended; a number ≥ 1: about how many older messages to read before
   * asking again; `undefined`: no part suffices (read the whole history). When this provider shapes
   * first, the handoff runtime opens a session by reading the branch backwards in pages until it
   * answers `0` (or {@link maxHistoryMessages} is reached), so the model inputs are word for word those
   * of a whole-history open.
   * @param newest the newest messages of a history (model messages, oldest first); `[]` asks for a first page
   * @returns `0`, a count of older messages to read next (≥ 1), or `undefined`
   * @example
   * ```ts
   * const lastUserTurn: ContextProvider = {
   *   name: 'last-user-turn',
   *   // keeps the newest user message and what follows it
   *   prepareModelInput: (m) => [...m.filter((x) => x.role === 'system'), ...m.slice(m.findLastIndex((x) => x.role === 'user'))],
   *   olderHistoryNeeded: (newest) => (newest.some((m) => m.role === 'user') ? 0 : 8),
   * };
   * ```
   */
  olderHistoryNeeded?(newest: readonly ModelMessage[]): number | undefined;
  /** Called once when a session closes (e.g. to save an episode). */
  onSessionClose?(args: SessionCloseArgs): Promise<void>;
}
