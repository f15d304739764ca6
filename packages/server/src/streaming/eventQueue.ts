import { type Pushable, pushable } from 'it-pushable';

/**
 * An unbounded async queue one SSE response reads from, on `it-pushable`: the branch log pushes
 * events into it as they happen, `end()` ends the reader's loop after what is queued, `close()` is
 * the reader leaving (what is queued is dropped). `onClose` runs once, at whichever comes first.
 *
 * @example
 * ```ts
 * const queue = new EventQueue<number>();
 * queue.push(1); queue.end();
 * for await (const n of queue) console.log(n); // 1
 * ```
 */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #source: Pushable<T>;
  #ended = false;
  #closed = false;
  #onClose: (() => void) | undefined;

  /** @param onClose called once when the reader leaves or the queue ends (e.g. to unsubscribe it) */
  constructor(onClose?: () => void) {
    this.#onClose = onClose;
    // A reader that breaks out of its loop ends the source: that is the reader leaving.
    this.#source = pushable<T>({ objectMode: true, onEnd: () => this.close() });
  }

  /** Whether the queue ended (or its reader left). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Adds an item for the reader (ignored once ended). */
  push(item: T): void {
    if (!this.#ended) this.#source.push(item);
  }

  /** Ends the queue: the reader gets what is queued, then its loop ends. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#source.end();
    this.#release();
  }

  /** The reader leaves: queued items are dropped. */
  close(): void {
    // `return()` calls `onEnd`, which calls here again: only the first call ends the source.
    if (this.#closed) return;
    this.#closed = true;
    this.#ended = true;
    void this.#source.return();
    this.#release();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.#source[Symbol.asyncIterator]();
  }

  #release(): void {
    const onClose = this.#onClose;
    this.#onClose = undefined;
    onClose?.();
  }
}
