import type { ModelClient, ModelRequest, ModelStreamEvent } from '@baton/core';

/** Accumulates the wall time spent inside model calls, in milliseconds. */
export class ModelClock {
  /** Total milliseconds spent waiting on models. */
  elapsedMs = 0;
  /** Model calls made. */
  calls = 0;
}

/**
 * Wraps a model client and adds the time spent producing each stream event to a {@link ModelClock},
 * so the replay can tell orchestration time (Baton's own work) from model time.
 *
 * @example
 * ```ts
 * const clock = new ModelClock();
 * const model = new TimedModel(new AbcdRouterModel(options), clock);
 * ```
 */
export class TimedModel implements ModelClient {
  constructor(
    readonly inner: ModelClient,
    readonly clock: ModelClock,
  ) {}

  /** The wrapped model's name. */
  get model(): string {
    return this.inner.model;
  }

  /** The wrapped model's stream, event for event; the time spent waiting for each event goes to the clock. */
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.clock.calls += 1;
    let started = performance.now();
    const iterator = this.inner.stream(request)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await iterator.next();
        this.clock.elapsedMs += performance.now() - started;
        if (next.done) return;
        yield next.value;
        started = performance.now();
      }
    } finally {
      await iterator.return?.();
    }
  }
}
