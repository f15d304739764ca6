import { ConcurrencyError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Logger } from './logger.js';

/** Options of {@link loggedStore}. */
export interface LoggedStoreOptions {
  logger: Logger;
  /** A store call that takes longer than this, in milliseconds, is logged at `warn` (default 250). */
  slowMs?: number;
}

/** Store methods whose result is a count worth an `info` line when non-zero (what was removed). */
const REMOVALS = new Set(['pruneCheckpoints', 'deleteInactiveSessions', 'deleteCheckpointsOlderThan', 'writeBatch']);

/** What a call removed: its count, or for `writeBatch` the checkpoints its prune deleted (`pruned`). */
function removedBy(method: string, outcome: unknown): unknown {
  if (method !== 'writeBatch') return outcome;
  return (outcome as { pruned?: number } | undefined)?.pruned;
}

/**
 * Wraps a {@link Store} so that what an operator needs is logged, and nothing else changes (every
 * call goes to `store` with the same arguments, results and errors):
 * - `warn` `store call was slow` — `{ method, sessionId?, durationMs }` for calls slower than `slowMs`;
 * - `warn` `store write lost a race` — `{ method, sessionId?, code }` when a call throws `ConcurrencyError`;
 * - `error` `store call failed` — `{ method, sessionId?, code?, err }` for any other failure;
 * - `info` `store removed documents` — `{ method, sessionId?, removed }` after pruning (`pruneCheckpoints`, or a
 *   `writeBatch` whose prune deleted checkpoints) or sweeping removed something.
 *
 * @param store the store to wrap (any `Store`: `InMemoryStore`, `FileStore`, `MongoStore`, …)
 * @returns a `Store` that forwards every call to `store`
 * @example
 * ```ts
 * import pino from 'pino';
 * import { FileStore, loggedStore } from '@baton/core';
 * const store = loggedStore(new FileStore({ directory: './data' }), { logger: pino(), slowMs: 100 });
 * ```
 */
export function loggedStore<TStore extends Store>(store: TStore, options: LoggedStoreOptions): TStore {
  const { logger } = options;
  const slowMs = options.slowMs ?? 250;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      let method = wrapped.get(property);
      if (method === undefined) {
        method = (...args: unknown[]) => {
          const startedAt = performance.now();
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (!(result instanceof Promise)) return result;
          const sessionId = sessionIdOf(args[0]);
          const fields = (extra: Record<string, unknown>) =>
            sessionId === undefined ? { method: property, ...extra } : { method: property, sessionId, ...extra };
          return result.then(
            (outcome: unknown) => {
              const durationMs = performance.now() - startedAt;
              if (durationMs > slowMs)
                logger.warn(fields({ durationMs: Math.round(durationMs) }), 'store call was slow');
              const removed = Array.isArray(outcome) ? outcome.length : removedBy(property, outcome);
              if (REMOVALS.has(property) && !isDryRun(args[0]) && typeof removed === 'number' && removed > 0)
                logger.info(fields({ removed }), 'store removed documents');
              return outcome;
            },
            (error: unknown) => {
              if (error instanceof ConcurrencyError)
                logger.warn(fields({ code: error.code }), 'store write lost a race');
              else logger.error(fields({ code: (error as { code?: unknown })?.code, err: error }), 'store call failed');
              throw error;
            },
          );
        };
        wrapped.set(property, method);
      }
      return method;
    },
  });
}

function isDryRun(options: unknown): boolean {
  return typeof options === 'object' && options !== null && (options as { dryRun?: unknown }).dryRun === true;
}

/** The session a store call is about: its first argument, or a batch's `sessionId` (`writeBatch`). */
function sessionIdOf(first: unknown): string | undefined {
  if (typeof first === 'string') return first;
  const batchSession = (first as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof first === 'object' && typeof batchSession === 'string' ? batchSession : undefined;
}
