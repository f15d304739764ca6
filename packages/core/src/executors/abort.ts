import { AbortedError } from '../errors.js';

/** A promise that rejects with {@link AbortedError} when a signal aborts, to race against work that may ignore the signal. */
export interface AbortRace {
  /** Rejects with `AbortedError` (cause: the signal's reason) once the signal aborts; never resolves. */
  readonly promise: Promise<never>;
  /** Stops listening to the signal (call it when the raced work is over). */
  dispose(): void;
}

/**
 * Listens to `signal` so that work which ignores it (a tool that never looks at its signal, a model
 * stream that hangs) can still be left when the turn is cancelled: race it with `promise`. The
 * abandoned work goes on in the background; its result is discarded.
 *
 * @example
 * ```ts
 * const abort = raceAbort(signal);
 * try {
 *   return await Promise.race([slowWork(), abort.promise]);
 * } finally {
 *   abort.dispose();
 * }
 * ```
 */
export function raceAbort(signal: AbortSignal): AbortRace {
  let reject!: (error: AbortedError) => void;
  const promise = new Promise<never>((_, fail) => {
    reject = fail;
  });
  // Nobody may be racing at the moment it rejects: that must not be an unhandled rejection.
  promise.catch(() => undefined);
  const onAbort = () => reject(new AbortedError('The turn was cancelled.', { cause: signal.reason }));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}
