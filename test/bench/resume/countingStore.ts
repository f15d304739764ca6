/**
 * Wraps a {@link Store} to count what a caller asks of it: calls and milliseconds per method, and
 * how many messages `readMessages` returned and checkpoints were loaded. For profiling the load
 * path in benches; every call goes through to the wrapped store unchanged.
 */
import type { Message, Store } from '@baton/core';

/** Calls and time per store method, and the messages read. */
export interface StoreCounts {
  calls: Record<string, { count: number; ms: number }>;
  messagesRead: number;
}

/** A store that counts, and its counts (reset them with `reset()`). */
export interface CountingStore {
  store: Store;
  counts: StoreCounts;
  reset(): void;
}

/** Wraps `inner` (see the module comment). */
export function countingStore(inner: Store): CountingStore {
  const result: CountingStore = {
    store: inner,
    counts: { calls: {}, messagesRead: 0 },
    reset() {
      result.counts = { calls: {}, messagesRead: 0 };
    },
  };
  result.store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (key === 'readMessages') result.counts.messagesRead += (answer as Message[]).length;
          return answer;
        } finally {
          const entry = result.counts.calls[key] ?? { count: 0, ms: 0 };
          entry.count += 1;
          entry.ms += performance.now() - started;
          result.counts.calls[key] = entry;
        }
      };
    },
  });
  return result;
}
