import {
  AgentExecutor,
  type BatonEvent,
  type EventSink,
  type Executor,
  type ExecutorInput,
  type ExecutorOutcome,
  type ReadySignal,
} from '@baton/core';

/**
 * Where a turn's events go: `emit` takes each event synchronously (it throws once the reader left:
 * let that propagate); `ready` is awaited before each side effect, so a reader that stops reading
 * stops the turn where a generator would have stopped (see `EventChannel`); `within` runs outside
 * calls (model calls, tools) in the tracing context of the innermost open span, when tracing.
 */
export interface TurnSink {
  emit: EventSink;
  ready: ReadySignal;
  within?: <T>(fn: () => T) => T;
}

/**
 * Whether an activation of `executor` goes through its `run`: when it has one, except for an
 * `AgentExecutor` subclass that overrides `execute` and not `run` (its inherited `run` would skip the override).
 */
function usesRun(executor: Executor): boolean {
  if (executor.run === undefined) return false;
  if (!(executor instanceof AgentExecutor)) return true;
  return executor.execute === AgentExecutor.prototype.execute || executor.run !== AgentExecutor.prototype.run;
}

/**
 * Runs one activation of `executor` into `sink`: its `run` when it has one, else its `execute`
 * generator, read one event at a time (each read after the reader asked for more, as `yield*` would).
 */
export function activate(executor: Executor, input: ExecutorInput, sink: TurnSink): Promise<ExecutorOutcome> {
  // Not an async function: the activation's own promise is returned as it is (no second promise and
  // no extra ticks per activation); a synchronous throw still rejects.
  try {
    if (usesRun(executor)) return executor.run!(input, sink.emit);
    const { within } = sink;
    return drain(within === undefined ? executor.execute(input) : within(() => executor.execute(input)), sink);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Emits the events of `events` into `sink`, reading each after the reader asked for more (as `yield*` would). */
export async function emitAll(events: AsyncGenerator<BatonEvent, void>, sink: TurnSink): Promise<void> {
  await drain(events, { emit: sink.emit, ready: sink.ready });
}

/**
 * Reads `events` into `sink` (each `next()` inside `sink.within` when given) and returns the
 * generator's return value; when the reader leaves (`emit` or `ready` throws), the generator is
 * closed so that it cleans up as `yield*` would have it.
 */
async function drain<R>(events: AsyncGenerator<BatonEvent, R>, sink: TurnSink): Promise<R> {
  const { within } = sink;
  let settled = false;
  try {
    for (;;) {
      let step: IteratorResult<BatonEvent, R>;
      try {
        step = await (within === undefined ? events.next() : within(() => events.next()));
      } catch (error) {
        settled = true;
        throw error;
      }
      if (step.done === true) {
        settled = true;
        return step.value;
      }
      sink.emit(step.value);
      await sink.ready();
    }
  } finally {
    if (!settled) await events.return(undefined as never);
  }
}
