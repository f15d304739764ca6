/**
 * One lock per key in this process (a session, a session branch, a lock file's path): callers of
 * the same key take turns, first come first served; keys are dropped when nobody holds or waits.
 * Used by `FileStore`'s writers of one session (in front of the lock across processes) and by
 * `@baton/handoff`'s calls on one session branch (`SessionLock`).
 *
 * Written here rather than on `async-mutex`: a write or a turn takes this lock every time, and a
 * free key is taken here without a promise ({@link tryAcquire}), where `Mutex.acquire` always costs
 * two promises and a generator. In `test/bench/turnCpuCompare.ts` that was most of a 25% loss of
 * CPU per in-memory turn (168 against 210 µs median, 16 alternating rounds, 2026-11-28); on a
 * FileStore write, taking a free `Mutex` took 25–37 µs at the median against 3.0–3.4 µs here
 * (instrumented, three alternating runs of 600 turns, 2026-11-29).
 *
 * @example
 * ```ts
 * import { KeyedLock } from '@baton/core/store-kit';
 * const locks = new KeyedLock();
 * const release = locks.tryAcquire('chat-1') ?? (await locks.acquire('chat-1'));
 * try { await work(); } finally { release(); }
 * ```
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Waits until `key` is free, takes it, and returns the function that frees it (call it once).
   * A free key is taken at once (the returned promise is already resolved).
   */
  acquire(key: string): Promise<() => void> {
    const previous = this.#tails.get(key);
    const free = this.#take(key, previous);
    return previous === undefined ? Promise.resolve(free) : previous.then(() => free);
  }

  /**
   * Takes `key` now when it is free, without a promise.
   * @returns the function that frees it (call it once), or `undefined` when someone holds or waits for it (then use {@link acquire})
   */
  tryAcquire(key: string): (() => void) | undefined {
    return this.#tails.has(key) ? undefined : this.#take(key, undefined);
  }

  /** Resolves once no key is held or waited for (holders that queue meanwhile are waited for too). */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all(this.#tails.values());
  }

  /** Queues a holder of `key` behind `previous` (the current tail, if any) and returns its release. */
  #take(key: string, previous: Promise<void> | undefined): () => void {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous === undefined ? mine : previous.then(() => mine);
    this.#tails.set(key, tail);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }
}
