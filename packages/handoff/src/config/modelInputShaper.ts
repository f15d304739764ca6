import {
  ConfigurationError,
  type ContextProvider,
  type ModelMessage,
  providerState,
  type StateAccess,
} from '@baton/core';
import { windowModelInput } from './historyWindow.js';

/** Where a model input is shaped: the session branch and its whole state (each provider is given its own slice). */
export interface ShapingContext {
  sessionId: string;
  branchId: string;
  state: StateAccess;
}

/** Every shaping of a workflow's model inputs, composed: `(messages, context) => shaped messages`. */
export type ModelInputShaper = (
  messages: readonly ModelMessage[],
  context: ShapingContext,
) => readonly ModelMessage[] | Promise<readonly ModelMessage[]>;

/**
 * Composes a workflow's shaping of each model input: the history window first (when set), then
 * every provider's `prepareModelInput` in order, each given the session branch and its own slice
 * of state (`providerState`, so what it keeps there is stored with the session).
 *
 * @param providers the workflow's context providers
 * @param window the history window's size in messages, or `undefined`
 * @returns the composed shaper; `undefined` when nothing shapes model inputs
 * @example
 * ```ts
 * const shape = modelInputShaper([workingMemory], undefined);
 * const input = await shape?.(messages, { sessionId, branchId, state: runtime.state });
 * ```
 */
export function modelInputShaper(
  providers: readonly ContextProvider[],
  window: number | undefined,
): ModelInputShaper | undefined {
  const shapers: ModelInputShaper[] = providers.flatMap((provider): ModelInputShaper[] => {
    if (provider.prepareModelInput === undefined) return [];
    const shape = provider.prepareModelInput.bind(provider);
    return [
      (messages, { sessionId, branchId, state }) =>
        shape(messages, { sessionId, branchId, state: providerState(state, provider) }),
    ];
  });
  if (window !== undefined) shapers.unshift((messages) => windowModelInput(messages, window));
  if (shapers.length <= 1) return shapers[0];
  return async (messages, context) => {
    let shaped = messages;
    for (const shape of shapers) shaped = await shape(shaped, context);
    return shaped;
  };
}

/**
 * Checks that every provider's name can key its state and that no two share one (they would share a slice).
 * @throws {ConfigurationError} naming the provider
 */
export function assertProviderNames(providers: readonly ContextProvider[]): void {
  const seen = new Set<string>();
  for (const provider of providers) {
    providerState({ session: {}, branch: {}, update: () => undefined }, provider);
    if (seen.has(provider.name)) {
      throw new ConfigurationError(
        `Two context providers are named ${JSON.stringify(provider.name)}; ` +
          "names key each provider's state, so give each a name of its own.",
      );
    }
    seen.add(provider.name);
  }
}
