import { AbortedError } from '../errors.js';

/**
 * A signal that never aborts (its controller is unreachable): the signal of calls made without one.
 * Work raced with it needs no race, so {@link raceAbort} skips the listener and the race for it.
 *
 * @example
 * ```ts
 * import { NEVER_ABORTED } from '@baton/core';
 * const signal = options.signal ?? NEVER_ABORTED;
 * ```
 */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** A race of work against a signal, so work which ignores the signal can still be left when it aborts. */
export interface AbortRace {
  /** `work`, or a rejection with `AbortedError` (cause: the signal's reason) once the signal aborts, whichever comes first. */
  race<T>(work: Promise<T>): Promise<T>;
  /** Stops listening to the signal (call it when the raced work is over). */
  dispose(): void;
}

/** The race for {@link NEVER_ABORTED}: the work itself. */
const NO_RACE: AbortRace = { race: (work) => work, dispose: () => undefined };

/**
 * Listens to `signal` so that work which ignores it (a tool that never looks at its signal, a model
 * stream that hangs) can still be left when the turn is cancelled: race it with `race`. The
 * abandoned work goes on in the background; its result is discarded. For {@link NEVER_ABORTED} no
 * listener is added and `race` returns the work as it is.
 *
 * @example
 * ```ts
 * const abort = raceAbort(signal);
 * try {
 *   return await abort.race(slowWork());
 * } finally {
 *   abort.dispose();
 * }
 * ```
 */
export function raceAbort(signal: AbortSignal): AbortRace {
  if (signal === NEVER_ABORTED) return NO_RACE;
  let reject!: (error: AbortedError) => void;
  const aborted = new Promise<never>((_, fail) => {
    reject = fail;
  });
  // Nobody may be racing at the moment it rejects: that must not be an unhandled rejection.
  aborted.catch(() => undefined);
  const onAbort = () => reject(new AbortedError('The turn was cancelled.', { cause: signal.reason }));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return { race: (work) => Promise.race([work, aborted]), dispose: () => signal.removeEventListener('abort', onAbort) };
}
