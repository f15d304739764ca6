/**
 * An unbounded async queue one SSE response reads from: the branch log pushes events into it as
 * they happen, `end()` ends the reader's loop, `close()` is the reader leaving (nothing more is kept).
 *
 * @example
 * ```ts
 * const queue = new EventQueue<number>();
 * queue.push(1); queue.end();
 * for await (const n of queue) console.log(n); // 1
 * ```
 */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #ended = false;
  #wake: (() => void) | undefined;
  #onClose: (() => void) | undefined;

  /** @param onClose called once when the reader leaves or the queue ends (e.g. to unsubscribe it) */
  constructor(onClose?: () => void) {
    this.#onClose = onClose;
  }

  /** Whether the queue ended (or its reader left). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Adds an item for the reader (ignored once ended). */
  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wake?.();
  }

  /** Ends the queue: the reader gets what is queued, then its loop ends. */
  end(): void {
    this.#ended = true;
    this.#wake?.();
    this.#release();
  }

  /** The reader leaves: queued items are dropped. */
  close(): void {
    this.#items.length = 0;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void> {
    try {
      for (;;) {
        if (this.#items.length > 0) {
          yield this.#items.shift()!;
          continue;
        }
        if (this.#ended) return;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      this.close();
    }
  }

  #release(): void {
    const onClose = this.#onClose;
    this.#onClose = undefined;
    onClose?.();
  }
}
