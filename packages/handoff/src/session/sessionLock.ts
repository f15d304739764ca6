import { Mutex } from 'async-mutex';

/**
 * One lock per key (a session branch), so two calls on the same session never interleave in this
 * process: the second waits for the first to finish (first come, first served). Each key is an
 * `async-mutex` `Mutex`; keys are dropped when nobody holds or waits.
 *
 * @example
 * ```ts
 * const locks = new SessionLock();
 * const release = await locks.acquire('chat-1/main');
 * try { await work(); } finally { release(); }
 * ```
 */
export class SessionLock {
  readonly #mutexes = new Map<string, Mutex>();

  /**
   * Waits until `key` is free, takes it, and returns the function that frees it (call it once; a
   * second call does nothing).
   */
  async acquire(key: string): Promise<() => void> {
    const mutex = this.#mutexOf(key);
    return this.#releaser(key, mutex, await mutex.acquire());
  }

  /**
   * Takes `key` now when it is free, without waiting.
   * @returns the function that frees it (call it once), or `undefined` when someone holds or waits for it (then use {@link acquire})
   */
  tryAcquire(key: string): (() => void) | undefined {
    const mutex = this.#mutexOf(key);
    if (mutex.isLocked()) return undefined;
    // A free mutex is taken synchronously by `acquire` (its promise only hands over the releaser).
    void mutex.acquire();
    return this.#releaser(key, mutex, () => mutex.release());
  }

  #mutexOf(key: string): Mutex {
    let mutex = this.#mutexes.get(key);
    if (mutex === undefined) {
      mutex = new Mutex();
      this.#mutexes.set(key, mutex);
    }
    return mutex;
  }

  /** `release` guarded to run once, dropping the key when nobody holds or waits for it afterwards. */
  #releaser(key: string, mutex: Mutex, release: () => void): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      // A waiter takes the mutex synchronously on release: an unlocked mutex has none.
      if (!mutex.isLocked() && this.#mutexes.get(key) === mutex) this.#mutexes.delete(key);
    };
  }
}
