/**
 * One lock per session branch (`<sessionId>/<branchId>`), so two calls on the same session branch
 * never interleave in this process: the second waits for the first to finish. It is `KeyedLock` of
 * `@baton/core/store-kit` (a free key is taken without a promise; keys are dropped when nobody
 * holds or waits), under the name this package has always exported.
 *
 * @example
 * ```ts
 * const locks = new SessionLock();
 * const release = await locks.acquire('chat-1/main');
 * try { await work(); } finally { release(); }
 * ```
 */
export { KeyedLock as SessionLock } from '@baton/core/store-kit';
