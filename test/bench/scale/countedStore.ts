/**
 * A store wrapper that counts the calls a server makes per store method, and the JSON bytes of the
 * event-log batches it appends (what `FileStore` writes per batch, less its ~80 bytes of framing;
 * `MongoStore` stores the same JSON text in one document). A `Proxy` over the real store: every
 * method runs on the store itself (its private fields intact).
 */
import type { EventLogEntry, Store } from '@baton/core';

/** The counters of {@link countStoreCalls}. */
export interface StoreCallCounts {
  /** Calls per store method name. */
  calls: Record<string, number>;
  /** JSON bytes of the entries passed to `appendEvents`. */
  eventBytes: number;
  /** Entries passed to `appendEvents` (the events logged). */
  eventEntries: number;
}

/**
 * Wraps `store` so that its method calls are counted in the returned `counts` (zero them with `reset`).
 * @example
 * ```ts
 * const { store: counted, counts } = countStoreCalls(new FileStore({ directory }));
 * // … run turns on `counted` …
 * counts.calls.appendEvents; // event-log writes
 * ```
 */
export function countStoreCalls(store: Store): { store: Store; counts: StoreCallCounts; reset(): void } {
  const counts: StoreCallCounts = { calls: {}, eventBytes: 0, eventEntries: 0 };
  const wrapped = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        counts.calls[property] = (counts.calls[property] ?? 0) + 1;
        if (property === 'appendEvents') {
          const entries = args[2] as EventLogEntry[];
          counts.eventBytes += Buffer.byteLength(JSON.stringify(entries));
          counts.eventEntries += entries.length;
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: wrapped,
    counts,
    reset() {
      counts.calls = {};
      counts.eventBytes = 0;
      counts.eventEntries = 0;
    },
  };
}
