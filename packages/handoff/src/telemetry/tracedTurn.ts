import { EventChannel, isReaderLeft } from '@baton/core';
import { context, trace } from '@opentelemetry/api';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import type { TurnSink } from '../turn/turnSink.js';
import { parseTraceparent } from './traceparent.js';
import { startTurnSpan, TurnTrace } from './turnTrace.js';

/** The instrumentation scope name of Baton's spans. */
export const TRACER_NAME = '@baton/handoff';

/**
 * Runs a turn (`run`, emitting into a sink) as an {@link EventChannel} its caller reads, through a
 * {@link TurnTrace} when a tracer records. Without a recording tracer (no OpenTelemetry SDK
 * registered, or the turn not sampled) the events go straight to the channel: no cost per event.
 * With one, each event updates the spans as it is emitted, the turn runs in the turn span's
 * context, and `within` runs model calls and tools in the innermost open span's (the `chat` or
 * `execute_tool` span under the agent's `invoke_agent` span), so instrumented clients nest there.
 * `resumes`: the turn continues the one that saved the loaded checkpoint (an answered request, an
 * interrupted turn), so its span links to that turn's span, even from another process.
 */
export function tracedTurn(
  runtime: SessionRuntime,
  resumes: boolean,
  run: (sink: TurnSink) => Promise<void>,
): EventChannel {
  const { telemetry, name } = runtime.config;
  const tracer = telemetry.tracer ?? trace.getTracer(TRACER_NAME);
  const paused = resumes ? parseTraceparent(runtime.checkpoint?.traceparent) : undefined;
  const links = paused === undefined ? [] : [{ context: paused, attributes: { 'baton.link': 'resumes' } }];
  return new EventChannel((channel) => {
    const span = startTurnSpan(tracer, name, links);
    if (!span.isRecording()) {
      // No SDK (or not sampled): the turn runs untraced, straight into the channel.
      span.end();
      return run(channel);
    }
    const turnTrace = new TurnTrace({
      tracer,
      workflow: name,
      sessionId: runtime.sessionId,
      branchId: runtime.branchId,
      captureContent: telemetry.captureContent ?? false,
      links,
      onTurn: (traceparent) => runtime.traceTurn(traceparent),
    });
    turnTrace.start(span);
    return traced(turnTrace, channel, run);
  });
}

async function traced(
  turnTrace: TurnTrace,
  channel: EventChannel,
  run: (sink: TurnSink) => Promise<void>,
): Promise<void> {
  const sink: TurnSink = {
    emit: (event) => {
      turnTrace.observe(event);
      channel.emit(event);
    },
    ready: channel.ready,
    // Each outside call runs in the innermost open span's context, so instrumented clients and tools nest under it.
    within: (fn) => context.with(turnTrace.activeContext, fn),
  };
  try {
    await context.with(turnTrace.activeContext, () => run(sink));
  } catch (error) {
    // A reader that left ends the spans as they are (no failure).
    if (!isReaderLeft(error)) turnTrace.fail(error);
    throw error;
  } finally {
    turnTrace.end();
  }
}
