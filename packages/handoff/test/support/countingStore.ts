import type { Message, Store } from '@baton/core';

/** One call the runtime made on the store: the method, and for `appendMessages` the seqs it wrote. */
export interface StoreCall {
  method: string;
  seqs?: number[];
}

/**
 * A real store (InMemoryStore, FileStore, …) seen through a Proxy that logs every method the
 * runtime calls on it; the store itself does the work. Its own internal calls are not logged.
 *
 * @returns `store` (give it to the workflow), `inner` (read it without logging) and `take()`: the
 *   calls since the last `take()`
 */
export function countingStore<S extends Store>(inner: S): { store: Store; inner: S; take(): StoreCall[] } {
  let calls: StoreCall[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        calls.push(prop === 'appendMessages' ? { method: prop, seqs: (args[2] as Message[]).map((m) => m.seq) } : { method: prop });
        return value.apply(target, args);
      };
    },
  }) as Store;
  return {
    store,
    inner,
    take() {
      const taken = calls;
      calls = [];
      return taken;
    },
  };
}

/** How many times each method was called, e.g. `{ appendMessages: 1, saveCheckpoint: 1, updateSession: 1 }`. */
export function countsOf(calls: readonly StoreCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { method } of calls) counts[method] = (counts[method] ?? 0) + 1;
  return counts;
}

/** The seqs of each `appendMessages` call, in order. */
export function appendsOf(calls: readonly StoreCall[]): number[][] {
  return calls.flatMap((call) => (call.seqs === undefined ? [] : [call.seqs]));
}
