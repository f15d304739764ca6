import type { BatonEvent } from '../conversation/events.js';

/**
 * A synchronous receiver of events, in order: what {@link Executor.run} and a turn emit into
 * instead of yielding through a generator per layer. It may throw (the reader left: see
 * {@link EventChannel}); the emitter lets that propagate, running its `finally` blocks.
 */
export type EventSink = (event: BatonEvent) => void;

/**
 * Where an emitter may go on (see {@link EventChannel.ready}): `undefined` when the reader already
 * asked for more, else a promise that resolves once it did and rejects (with the channel's own
 * error) when the reader left instead.
 */
export type ReadySignal = () => Promise<void> | undefined;

/** Told synchronously of what a channel's reader is given, as it is given (see {@link EventChannel.observeReads}). */
export interface ChannelReads {
  /** An event the reader is given. */
  event(event: BatonEvent): void;
  /** The reader is told the run is done (every event read). */
  done(): void;
  /** The reader is given the run's failure. */
  failed(error: unknown): void;
}

/** Thrown into an emitter whose reader left the channel; it ends the run like a generator's `return`. */
class ReaderLeft extends Error {
  constructor() {
    super('The reader stopped reading the events.');
    this.name = 'ReaderLeft';
  }
}

const LEFT = new ReaderLeft();

/** Whether `error` is what {@link EventChannel} throws into an emitter whose reader left (not a failure). */
export function isReaderLeft(error: unknown): boolean {
  return error === LEFT;
}

/**
 * An async generator of events fed by a function that emits them synchronously
 * (`run(channel)` calls `channel.emit(event)`), so a stack of layers (a turn, an executor, a model
 * call) costs one promise per event instead of one per layer. The run starts on the first `next()`.
 * Reading it behaves like reading an async generator that yields each event: the run goes on past
 * an event while the reader has not asked for the next one only up to its next `await ready()`
 * (an emitter calls it before each side effect: a model call, a tool, a write), so a reader that
 * leaves (`return()`, `break` in `for await`) stops the run there: `ready()` rejects, `emit` throws,
 * the run's `finally` blocks run, and `return()` resolves once the run has settled. Events emitted
 * but not read when the reader left are dropped. A failure of the run is thrown by the `next()`
 * after the events emitted before it.
 *
 * @example
 * ```ts
 * import { EventChannel } from '@baton/core';
 * const events = new EventChannel(async (channel) => {
 *   channel.emit({ type: 'agent.started', sessionId: 's', branchId: 'main', agent: 'a' });
 *   await channel.ready(); // the reader took it and asked for more (or left: this throws)
 * });
 * for await (const event of events) console.log(event.type);
 * ```
 */
export class EventChannel implements AsyncGenerator<BatonEvent, void> {
  readonly #run: (channel: EventChannel) => Promise<void>;
  #buffer: (BatonEvent | undefined)[] = [];
  #head = 0;
  /** Settles the reader's pending `next()` (only when nothing is buffered); `#rejectReader` is set with it. */
  #reader: ((step: IteratorResult<BatonEvent, void>) => void) | undefined;
  #rejectReader: ((error: unknown) => void) | undefined;
  /** Resumes the run waiting in `ready()` for the reader; `#rejectWaiting` is set with it. */
  #waiting: (() => void) | undefined;
  #rejectWaiting: ((error: unknown) => void) | undefined;
  /**
   * The executors of the promises `next()` and `ready()` wait with, made once per channel rather
   * than a closure per promise (every event of a turn goes through one of them).
   */
  readonly #awaitReader = (
    resolve: (step: IteratorResult<BatonEvent, void>) => void,
    reject: (error: unknown) => void,
  ): void => {
    this.#reader = resolve;
    this.#rejectReader = reject;
  };
  readonly #awaitRun = (resolve: () => void, reject: (error: unknown) => void): void => {
    this.#waiting = resolve;
    this.#rejectWaiting = reject;
  };
  #settled: Promise<void> | undefined;
  #state: 'new' | 'running' | 'done' | 'failed' = 'new';
  #error: unknown;
  #left = false;
  #unattended = false;
  #reads: ChannelReads | undefined;

  /** @param run emits the events into the channel; its promise settles when it is done (a rejection is the failure the reader gets) */
  constructor(run: (channel: EventChannel) => Promise<void>) {
    this.#run = run;
  }

  /**
   * Adds an event for the reader (to its pending `next()`, or to the buffer).
   * @throws the channel's own error once the reader left (see {@link isReaderLeft}): let it propagate
   */
  readonly emit: EventSink = (event) => {
    if (this.#left) throw LEFT;
    const reader = this.#reader;
    if (reader !== undefined) {
      this.#reader = undefined;
      this.#rejectReader = undefined;
      this.#reads?.event(event);
      reader({ done: false, value: event });
    } else this.#buffer.push(event);
  };

  /**
   * Where a generator would resume after a `yield`: `undefined` when the reader already asked for
   * an event past everything emitted (or nobody can leave: see {@link unattended}), else a promise
   * that resolves when it does and rejects when it leaves instead. Call it before each side effect.
   */
  readonly ready: ReadySignal = () => {
    if (this.#left) return Promise.reject(LEFT);
    if (this.#unattended || this.#reader !== undefined) return undefined;
    return new Promise<void>(this.#awaitRun);
  };

  /**
   * Tells the channel that its reader drains it to the end and never leaves early (an awaited turn):
   * `ready()` then never waits, and the run goes on without pausing for the reader.
   */
  unattended(): void {
    this.#unattended = true;
    this.#resumeRun();
  }

  /**
   * Tells `reads` of every event, end and failure as the reader is given it, so a wrapper that
   * watches the events (a turn's stream gathering its result) needs no promise of its own per event.
   */
  observeReads(reads: ChannelReads): void {
    this.#reads = reads;
  }

  /** The next event (starting the run on the first call); `done` once the run finished and every event was read. */
  next(): Promise<IteratorResult<BatonEvent, void>> {
    if (this.#state === 'new') this.#start();
    if (this.#head < this.#buffer.length) {
      const value = this.#buffer[this.#head]!;
      this.#buffer[this.#head] = undefined;
      this.#head += 1;
      if (this.#head === this.#buffer.length) {
        this.#buffer.length = 0;
        this.#head = 0;
      }
      this.#reads?.event(value);
      return Promise.resolve({ done: false, value });
    }
    if (this.#state === 'done') {
      this.#reads?.done();
      return Promise.resolve({ done: true, value: undefined });
    }
    if (this.#state === 'failed') {
      this.#state = 'done';
      this.#reads?.failed(this.#error);
      return Promise.reject(this.#error);
    }
    const step = new Promise<IteratorResult<BatonEvent, void>>(this.#awaitReader);
    // The reader asks past everything emitted: a run waiting in ready() goes on.
    this.#resumeRun();
    return step;
  }

  /** Leaves: the run stops at its next `emit` or `ready()` and runs its `finally` blocks; resolves once it settled. */
  async return(): Promise<IteratorResult<BatonEvent, void>> {
    if (this.#state === 'new') {
      this.#state = 'done';
      return { done: true, value: undefined };
    }
    this.#left = true;
    this.#buffer = [];
    this.#head = 0;
    const reject = this.#rejectWaiting;
    this.#waiting = undefined;
    this.#rejectWaiting = undefined;
    reject?.(LEFT);
    // A failure after the reader left is not the reader's: the run handled it (stored what it could).
    await this.#settled?.catch(() => undefined);
    this.#state = 'done';
    return { done: true, value: undefined };
  }

  /** Leaves as {@link return} does, then rejects with `error`. */
  async throw(error: unknown): Promise<IteratorResult<BatonEvent, void>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  /** Lets a run waiting in `ready()` go on. */
  #resumeRun(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    this.#waiting = undefined;
    this.#rejectWaiting = undefined;
    waiting();
  }

  #start(): void {
    this.#state = 'running';
    let running: Promise<void>;
    try {
      running = this.#run(this);
    } catch (error) {
      running = Promise.reject(error);
    }
    this.#settled = running.then(
      () => this.#finish(undefined, false),
      (error: unknown) => {
        this.#finish(error, !isReaderLeft(error));
      },
    );
  }

  #finish(error: unknown, failed: boolean): void {
    const reader = this.#reader;
    const rejectReader = this.#rejectReader;
    this.#reader = undefined;
    this.#rejectReader = undefined;
    if (failed && !this.#left) {
      if (rejectReader !== undefined) {
        this.#state = 'done';
        this.#reads?.failed(error);
        rejectReader(error);
      } else {
        this.#state = 'failed';
        this.#error = error;
      }
      return;
    }
    this.#state = 'done';
    if (reader !== undefined) {
      this.#reads?.done();
      reader({ done: true, value: undefined });
    }
  }
}
