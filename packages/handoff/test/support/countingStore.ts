import type { Message, Store, StoreBatch } from '@baton/core';

/**
 * One call the runtime made on the store: the method, and for `appendMessages` the seqs it wrote. A
 * `writeBatch` is logged as the calls it stands for, in its order (`appendMessages`,
 * `updateBranch`, `updateSession`, `saveCheckpoint`, `pruneCheckpoints`), each with the number of the batch (from 1).
 */
export interface StoreCall {
  method: string;
  seqs?: number[];
  batch?: number;
}

/** The calls a `writeBatch` stands for, in the order it stores them. */
function batchParts(batch: StoreBatch, number: number): StoreCall[] {
  const parts: StoreCall[] = [];
  if (batch.messages !== undefined && batch.messages.length > 0)
    parts.push({ method: 'appendMessages', seqs: batch.messages.map((m) => m.seq), batch: number });
  if (batch.branch !== undefined) parts.push({ method: 'updateBranch', batch: number });
  if (batch.session !== undefined) parts.push({ method: 'updateSession', batch: number });
  if (batch.checkpoint !== undefined) parts.push({ method: 'saveCheckpoint', batch: number });
  if (batch.pruneCheckpoints !== undefined) parts.push({ method: 'pruneCheckpoints', batch: number });
  return parts;
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
  let batches = 0;
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        if (prop === 'writeBatch') {
          batches += 1;
          calls.push(...batchParts(args[0] as StoreBatch, batches));
        } else
          calls.push(
            prop === 'appendMessages'
              ? { method: prop, seqs: (args[2] as Message[]).map((m) => m.seq) }
              : { method: prop },
          );
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

/** How many store writes the calls took: each call outside a batch, and each batch once. */
export function writesOf(calls: readonly StoreCall[]): number {
  return new Set(calls.map((call, index) => (call.batch === undefined ? `call ${index}` : `batch ${call.batch}`))).size;
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
