import { BatonError, type BatonEvent, ConcurrencyError } from '@baton/core';
import { isHandoffToolName } from '../routing/handoffTools.js';
import type { SessionRuntime } from '../session/sessionRuntime.js';
import { flushAfterFailure } from './flushMessages.js';

const DONE: IteratorReturnResult<void> = Object.freeze({ done: true, value: undefined });
const PULL: Phase = Object.freeze({ at: 'pull' });
const FINISHED: Phase = Object.freeze({ at: 'done' });

/**
 * Where a {@link TurnEvents} stands between two reads: about to read the next step (`pull`), emitting
 * the runtime's queued events before the step just read (`drain`), after a `tool.result` that may
 * need its `HANDOFF_REFUSED` error (`after`), after announcing a failure that is thrown next
 * (`failed`), or finished.
 */
type Phase =
  | { at: 'pull' }
  | { at: 'drain'; step: IteratorResult<BatonEvent, void> }
  | { at: 'after'; event: BatonEvent }
  | { at: 'failed'; error: unknown }
  | { at: 'done' };

/**
 * The event stream of one call's turns, around the turn's steps (`turnSteps` in turnRunner.ts):
 * events raised on the side (a `checkpoint` saved inside a commit, a refused handoff inside a tool)
 * wait in `runtime.queue` and are emitted before the next step event; a `tool.result` of a handoff
 * tool the agent does not have is followed by a `HANDOFF_REFUSED` error. A failure is announced as a
 * fatal `error` event after what the turn committed is stored, marks the runtime for a reload on the
 * next call, and is thrown by the read after it. A stream left before `turn.completed` keeps what
 * the turn committed and marks the runtime for a reload.
 *
 * It behaves as the async generator it replaces (reads are served one at a time, in call order;
 * `return` and `throw` act as they would at the generator's last `yield`), but as a plain object:
 * an event passes through one awaited call instead of a generator's resumption, on every event of
 * every turn.
 */
export class TurnEvents implements AsyncGenerator<BatonEvent, void> {
  readonly #runtime: SessionRuntime;
  readonly #start: () => AsyncGenerator<BatonEvent, void>;
  #steps: AsyncGenerator<BatonEvent, void> | undefined;
  #phase: Phase = PULL;
  /** Whether the current turn reached `turn.completed` (a turn left before it is unfinished). */
  #ended = false;
  /** Reads and `return`/`throw` calls not settled yet; the last one's promise (they run in order). */
  #calls = 0;
  #last: Promise<unknown> | undefined;

  /**
   * @param runtime the loaded session runtime (the caller holds its lock)
   * @param start creates the turn's steps (called on the first read)
   */
  constructor(runtime: SessionRuntime, start: () => AsyncGenerator<BatonEvent, void>) {
    this.#runtime = runtime;
    this.#start = start;
  }

  next(): Promise<IteratorResult<BatonEvent, void>> {
    return this.#inOrder(this.#read);
  }

  return(): Promise<IteratorResult<BatonEvent, void>> {
    return this.#inOrder(this.#return);
  }

  throw(error: unknown): Promise<IteratorResult<BatonEvent, void>> {
    return this.#inOrder(this.#throw, error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  /**
   * Runs `call` (which counts itself out of `#calls` when it settles) after every earlier call
   * settled; at once when none is pending, so a read costs no extra promise.
   */
  #inOrder(call: (this: TurnEvents, error?: unknown) => Promise<IteratorResult<BatonEvent, void>>, error?: unknown): Promise<IteratorResult<BatonEvent, void>> {
    this.#calls += 1;
    let result: Promise<IteratorResult<BatonEvent, void>>;
    if (this.#calls === 1) result = call.call(this, error);
    else {
      const run = () => call.call(this, error);
      result = this.#last!.then(run, run);
    }
    this.#last = result;
    return result;
  }

  async #return(): Promise<IteratorResult<BatonEvent, void>> {
    try {
      if (this.#phase.at !== 'done') await this.#finish();
      return DONE;
    } finally {
      this.#calls -= 1;
    }
  }

  async #throw(error: unknown): Promise<IteratorResult<BatonEvent, void>> {
    try {
      const phase = this.#phase;
      // Before the first read, after the end, or while a failure is announced, the error ends the stream as it would a generator.
      if (phase.at === 'done' || this.#steps === undefined || phase.at === 'failed') {
        if (phase.at !== 'done') await this.#finish();
        throw error;
      }
      return await this.#fail(error);
    } finally {
      this.#calls -= 1;
    }
  }

  /** The next event (one async call per event: this is every event's path). */
  async #read(): Promise<IteratorResult<BatonEvent, void>> {
    try {
      const phase = this.#phase;
      if (phase.at === 'done') return DONE;
      if (phase.at === 'failed') {
        await this.#finish();
        throw phase.error;
      }
      try {
        let step: IteratorResult<BatonEvent, void>;
        if (phase.at === 'drain') step = phase.step;
        else {
          if (phase.at === 'after') {
            this.#phase = PULL;
            const refused = phase.event.type === 'tool.result' ? refusedHandoff(this.#runtime, phase.event) : undefined;
            if (refused !== undefined) {
              logNonFatal(this.#runtime, refused);
              return { done: false, value: refused };
            }
          }
          this.#steps ??= this.#start();
          step = await this.#steps.next();
        }
        const queue = this.#runtime.queue;
        if (queue.length > 0) {
          this.#phase = { at: 'drain', step };
          return { done: false, value: queue.shift()! };
        }
        if (step.done === true) {
          await this.#finish();
          return DONE;
        }
        const event = step.value;
        if (event.type === 'turn.completed') this.#ended = true;
        else if (event.type === 'turn.started') this.#ended = false;
        else if (event.type === 'error') logNonFatal(this.#runtime, event);
        this.#phase = event.type === 'tool.result' ? { at: 'after', event } : PULL;
        return step;
      } catch (error) {
        return await this.#fail(error);
      }
    } finally {
      this.#calls -= 1;
    }
  }

  /** The turn failed with `error`: what it committed is stored first (a failed flush is not retried), the runtime reloads on the next call. */
  async #fail(error: unknown): Promise<IteratorResult<BatonEvent, void>> {
    const runtime = this.#runtime;
    this.#phase = { at: 'failed', error };
    try {
      await flushAfterFailure(runtime);
      runtime.stale = true;
      const code = error instanceof BatonError ? error.code : 'INTERNAL';
      const message = error instanceof Error ? error.message : String(error);
      runtime.config.logger[error instanceof ConcurrencyError ? 'warn' : 'error']({ sessionId: runtime.sessionId, branchId: runtime.branchId, code, err: error }, 'turn failed');
      return { done: false, value: { type: 'error', sessionId: runtime.sessionId, branchId: runtime.branchId, code, message, fatal: true } };
    } catch (thrown) {
      await this.#finish();
      throw thrown;
    }
  }

  /** Ends the stream: the steps are left, and a turn left before `turn.completed` keeps what it committed and reloads on the next call. */
  async #finish(): Promise<void> {
    this.#phase = FINISHED;
    const steps = this.#steps;
    if (steps === undefined) return;
    await steps.return(undefined).catch(() => undefined);
    if (!this.#ended) {
      // The caller stopped reading before the turn ended: keep what it committed, and let the next
      // call reload from the store, which finishes the turn if its user message was stored and
      // forgets it otherwise.
      await flushAfterFailure(this.#runtime);
      this.#runtime.stale = true;
    }
  }
}

/** Logs a non-fatal `error` event (a refused handoff) at `warn`. */
function logNonFatal(runtime: SessionRuntime, event: Extract<BatonEvent, { type: 'error' }>): void {
  runtime.config.logger.warn({ sessionId: runtime.sessionId, branchId: runtime.branchId, code: event.code }, event.message);
}

/**
 * A `HANDOFF_REFUSED` error when the active agent called a handoff tool it does not have (the model
 * got an error result). The active agent is the one whose activation ran the tool (a handoff applies
 * when its result is committed, later).
 */
function refusedHandoff(runtime: SessionRuntime, event: Extract<BatonEvent, { type: 'tool.result' }>): Extract<BatonEvent, { type: 'error' }> | undefined {
  const agent = runtime.snapshot.context.activeAgent;
  if (!event.isError || !isHandoffToolName(event.toolName) || runtime.toolsFor(agent).some((t) => t.name === event.toolName)) return undefined;
  return {
    type: 'error',
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    code: 'HANDOFF_REFUSED',
    message: `${agent} called ${event.toolName}, which is not one of its handoffs; the model was answered with an error result.`,
    fatal: false,
  };
}
