import {
  addUsage,
  type BatonEvent,
  EventChannel,
  emptyUsage,
  type Message,
  type Request,
  type Usage,
} from '@baton/core';

/**
 * What awaiting a {@link TurnStream} gives: what the call did, gathered from its events.
 * `message` is the last answer to the user (an assistant message without tool calls) the call
 * committed; `pendingRequests` are the requests the session waits on when the call ended.
 */
export interface TurnResult {
  sessionId: string;
  branchId: string;
  /** The last assistant message to the user the call committed, if any. */
  message: Message | undefined;
  /** Every message the call committed, oldest first. */
  messages: readonly Message[];
  /** The requests the session waits on after the call (answer them with `session.respond`). */
  pendingRequests: readonly Request[];
  /** Model usage summed over the turns of the call. */
  usage: Usage;
  /** The agent that takes the next turn (from the last `turn.completed`); `undefined` when no turn completed. */
  nextAgent: string | undefined;
  /** Whether the call reached `turn.completed` (false when the stream was left early or ended with nothing to do). */
  completed: boolean;
  /** Whether the session was closed in the call (`session.closed`). */
  closed: boolean;
}

/** The end of a call's generator that did not fail. */
const ENDED = { failed: false } as const;

/**
 * The event stream of one call that runs a turn (`session.send`, `respond`, `resume`): an async
 * generator of {@link BatonEvent}s that is also awaitable, resolving to a {@link TurnResult}. The
 * turn starts once, when the stream is first read or awaited, whichever comes first
 * (docs/architecture.md invariant 8): awaiting a stream that is being iterated waits for the
 * iteration to end and resolves from the events it saw; awaiting it again gives the same result.
 * A failed turn rejects the await (and throws from the iteration) with the turn's error.
 *
 * @example
 * ```ts
 * const result = await session.send('Where is my order 1234?'); // runs the whole turn
 * console.log(result.message?.content, result.pendingRequests.length);
 * for await (const event of session.send('Thanks')) console.log(event.type); // or stream it
 * ```
 */
export class TurnStream implements AsyncGenerator<BatonEvent, void>, PromiseLike<TurnResult> {
  readonly #start: () => AsyncGenerator<BatonEvent, void>;
  readonly #enter: (() => Promise<() => void> | (() => void)) | undefined;
  readonly #pending: () => readonly Request[];
  readonly #base: { sessionId: string; branchId: string };
  /** Set on the first read or await: resolves to the call's generator once `enter` is done. */
  #opened: Promise<AsyncGenerator<BatonEvent, void>> | undefined;
  /** The call's generator, once `#opened` resolved. */
  #generator: AsyncGenerator<BatonEvent, void> | undefined;
  /** Releases what `enter` took (once), when the call's generator is done, failed or left. */
  #exit: (() => void) | undefined;
  #result: Promise<TurnResult> | undefined;
  /** How the call's generator ended, once it did (the first end counts): `{ failed: false }`, or the error it failed with. */
  #end: { failed: false } | { failed: true; error: unknown } | undefined;
  /** Settled at the end, for an await that came while the stream was being iterated (made only then). */
  #ended: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  readonly #messages: Message[] = [];
  #usage: Usage = emptyUsage();
  #nextAgent: string | undefined;
  #completed = false;
  #closed = false;
  /** Awaited, not iterated: the call's generator is read to the end (see `EventChannel.unattended`). */
  #unattended = false;
  /** The call's generator is an `EventChannel` that tells this stream what its reader gets: read it directly. */
  #direct = false;

  /**
   * @param base the session and branch the call runs on
   * @param start creates the call's generator (called once, on the first read or await, after `enter`)
   * @param pendingRequests reads the session's pending requests once the call ended
   * @param enter runs first (e.g. takes the session's lock) and returns what to run when the
   *   generator is done, failed or left (e.g. release the lock), or a promise of it when it must
   *   wait; a failure of `enter` fails the call
   */
  constructor(
    base: { sessionId: string; branchId: string },
    start: () => AsyncGenerator<BatonEvent, void>,
    pendingRequests: () => readonly Request[],
    enter?: () => Promise<() => void> | (() => void),
  ) {
    this.#base = base;
    this.#start = start;
    this.#pending = pendingRequests;
    this.#enter = enter;
  }

  /** Reads the next event (starting the turn on the first call). */
  next(): Promise<IteratorResult<BatonEvent, void>> {
    let generator = this.#generator;
    if (generator === undefined) {
      const opened = this.#open();
      // Entered at once (see `enter`): the generator already started and is read below.
      generator = this.#generator;
      if (generator === undefined) {
        return opened.then(
          (started) => (this.#direct ? started.next() : started.next().then(this.#onStep(), this.#onError())),
          this.#onError(),
        );
      }
    }
    // Once started, the generator is read directly (one promise per event, not an async function's).
    return this.#direct ? generator.next() : generator.next().then(this.#onStep(), this.#onError());
  }

  /** The handlers of a step read through a promise (made on first use: a turn read directly needs none). */
  #stepHandler: ((step: IteratorResult<BatonEvent, void>) => IteratorResult<BatonEvent, void>) | undefined;
  #errorHandler: ((error: unknown) => never) | undefined;

  /** Observes a step of the call's generator (leaving the stream when it is the last). */
  #onStep(): (step: IteratorResult<BatonEvent, void>) => IteratorResult<BatonEvent, void> {
    this.#stepHandler ??= (step) => {
      if (step.done === true) {
        this.#leave();
        this.#finish();
      } else this.#observe(step.value);
      return step;
    };
    return this.#stepHandler;
  }

  /** Leaves the stream on a failure of the call and rethrows it. */
  #onError(): (error: unknown) => never {
    this.#errorHandler ??= (error) => {
      this.#leave();
      this.#fail(error);
      throw error;
    };
    return this.#errorHandler;
  }

  /** Leaves the stream: what the turn committed is kept, and the next call on the session finishes it. */
  async return(): Promise<IteratorResult<BatonEvent, void>> {
    if (this.#opened === undefined) return { done: true, value: undefined };
    try {
      const generator = await this.#opened.catch(() => undefined);
      return generator === undefined ? { done: true, value: undefined } : await generator.return(undefined);
    } finally {
      this.#leave();
      this.#finish();
    }
  }

  /** Throws `error` into the turn's generator (as `AsyncGenerator.throw`). */
  async throw(error: unknown): Promise<IteratorResult<BatonEvent, void>> {
    try {
      const step = await (await this.#open()).throw(error);
      if (step.done === true) this.#leave();
      return step;
    } catch (thrown) {
      this.#leave();
      this.#fail(thrown);
      throw thrown;
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * Leaves the stream as {@link TurnStream.return} does (`await using stream = session.send(…)`).
   * Declared so the stream is a whole `AsyncGenerator` where the `esnext.disposable` lib makes
   * generators disposable (consumers compiling the declarations with `skipLibCheck: false`).
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  /** Awaits the whole turn: reads it to the end (or waits for the reader already iterating it) and resolves to its {@link TurnResult}. */
  // biome-ignore lint/suspicious/noThenProperty: the stream is deliberately awaitable (a turn that can be awaited or iterated)
  then<TResult1 = TurnResult, TResult2 = never>(
    onfulfilled?: ((value: TurnResult) => TResult1 | PromiseLike<TResult1>) | null,
    onrejected?: ((reason: unknown) => TResult2 | PromiseLike<TResult2>) | null,
  ): Promise<TResult1 | TResult2> {
    this.#result ??= this.#opened === undefined ? this.#drain() : this.#whenEnded().then(() => this.#summary());
    return this.#result.then(onfulfilled, onrejected);
  }

  /** The call's generator, entering and starting it on the first call. */
  #open(): Promise<AsyncGenerator<BatonEvent, void>> {
    if (this.#opened === undefined) {
      const enter = this.#enter;
      if (enter === undefined) this.#opened = (async () => this.#started())();
      else {
        let entered: Promise<() => void> | (() => void);
        try {
          entered = enter();
        } catch (error) {
          entered = Promise.reject(error);
        }
        this.#opened = typeof entered === 'function' ? this.#startEntered(entered) : this.#enterThenStart(entered);
      }
    }
    return this.#opened;
  }

  /** Starts the call's generator at once, `enter` having returned its `exit` without waiting. */
  #startEntered(exit: () => void): Promise<AsyncGenerator<BatonEvent, void>> {
    this.#exit = exit;
    try {
      return Promise.resolve(this.#started());
    } catch (error) {
      this.#leave();
      return Promise.reject(error);
    }
  }

  async #enterThenStart(entering: Promise<() => void>): Promise<AsyncGenerator<BatonEvent, void>> {
    this.#exit = await entering;
    try {
      return this.#started();
    } catch (error) {
      this.#leave();
      throw error;
    }
  }

  /** Resolves when the call's generator ended (at once if it did), rejects with its failure. */
  #whenEnded(): Promise<void> {
    const end = this.#end;
    if (end !== undefined) return end.failed ? Promise.reject(end.error) : Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#ended = { resolve, reject };
    });
  }

  /** The call's generator is done or was left (the first end counts). */
  #finish(): void {
    if (this.#end !== undefined) return;
    this.#end = ENDED;
    this.#ended?.resolve();
  }

  /** The call's generator failed with `error` (the first end counts). */
  #fail(error: unknown): void {
    if (this.#end !== undefined) return;
    this.#end = { failed: true, error };
    this.#ended?.reject(error);
  }

  /** Starts the call's generator (telling a channel when nobody can leave it early). */
  #started(): AsyncGenerator<BatonEvent, void> {
    const generator = this.#start();
    this.#generator = generator;
    if (generator instanceof EventChannel) {
      if (this.#unattended) generator.unattended();
      generator.observeReads({
        event: (event) => this.#observe(event),
        done: () => {
          this.#leave();
          this.#finish();
        },
        failed: (error) => {
          this.#leave();
          this.#fail(error);
        },
      });
      this.#direct = true;
    }
    return generator;
  }

  /** Runs what `enter` returned, once. */
  #leave(): void {
    const exit = this.#exit;
    this.#exit = undefined;
    exit?.();
  }

  async #drain(): Promise<TurnResult> {
    // Nobody iterates this stream and it is read to the end: the turn need not pause for its reader.
    this.#unattended = true;
    for (;;) {
      const step = await this.next();
      if (step.done === true) return this.#summary();
    }
  }

  #observe(event: BatonEvent): void {
    if (event.type === 'message') this.#messages.push(event.message);
    else if (event.type === 'turn.completed') {
      this.#completed = true;
      this.#usage = addUsage(this.#usage, event.usage);
      this.#nextAgent = event.nextAgent;
    } else if (event.type === 'session.closed') this.#closed = true;
  }

  #summary(): TurnResult {
    const answer = this.#messages.findLast((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) === 0);
    return {
      ...this.#base,
      message: answer,
      messages: [...this.#messages],
      pendingRequests: [...this.#pending()],
      usage: this.#usage,
      nextAgent: this.#nextAgent,
      completed: this.#completed,
      closed: this.#closed,
    };
  }
}
