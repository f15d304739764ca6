import type { Store } from '../store/store.js';
import type { Message, ModelMessage } from './message.js';
import type { Session } from './session.js';

/** What a context provider learns before a turn. */
export interface BeforeTurnArgs {
  session: Session;
  branchId: string;
  /** The new user message's text. */
  input: string;
  store: Store;
  signal: AbortSignal;
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
  readonly name: string;
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
  /** Shapes every model input (e.g. trims history to a token budget). Must keep a tool call with its result. */
  prepareModelInput?(messages: readonly ModelMessage[]): readonly ModelMessage[] | Promise<readonly ModelMessage[]>;
  /** Called once when a session closes (e.g. to save an episode). */
  onSessionClose?(args: SessionCloseArgs): Promise<void>;
}
