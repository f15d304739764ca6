import type { BatonEvent } from '@baton/core';
import { context, trace } from '@opentelemetry/api';
import type { SessionRuntime } from '../session/sessionRuntime.js';
import { parseTraceparent } from './traceparent.js';
import { startTurnSpan, TurnTrace } from './turnTrace.js';

/** The instrumentation scope name of Baton's spans. */
export const TRACER_NAME = '@baton/handoff';

/**
 * Runs a turn's events through a {@link TurnTrace}. Without a recording tracer (no OpenTelemetry SDK
 * registered, or the turn not sampled) it returns `run()` itself: no wrapper, no cost per event.
 * `resumes`: the turn continues the one that saved the loaded checkpoint (an answered request, an
 * interrupted turn), so its span links to that turn's span, even from another process.
 */
export function tracedTurn(runtime: SessionRuntime, resumes: boolean, run: () => AsyncGenerator<BatonEvent, void>): AsyncGenerator<BatonEvent, void> {
  const { telemetry, name } = runtime.config;
  const tracer = telemetry.tracer ?? trace.getTracer(TRACER_NAME);
  const paused = resumes ? parseTraceparent(runtime.checkpoint?.traceparent) : undefined;
  const links = paused === undefined ? [] : [{ context: paused, attributes: { 'baton.link': 'resumes' } }];
  const span = startTurnSpan(tracer, name, links);
  if (!span.isRecording()) {
    // No SDK (or not sampled): the turn runs untraced, without a wrapper.
    span.end();
    return run();
  }
  const turnTrace = new TurnTrace({
    tracer,
    workflow: name,
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    captureContent: telemetry.captureContent ?? false,
    links,
    onTurn: (traceparent) => {
      runtime.traceparent = traceparent;
    },
  });
  turnTrace.start(span);
  return observe(turnTrace, run());
}

async function* observe(turnTrace: TurnTrace, events: AsyncGenerator<BatonEvent, void>): AsyncGenerator<BatonEvent, void> {
  let finished = false;
  try {
    for (;;) {
      // Each step runs in the innermost open span's context, so instrumented clients and tools nest under it.
      const next = await context.with(turnTrace.activeContext, () => events.next());
      if (next.done === true) break;
      turnTrace.observe(next.value);
      yield next.value;
    }
    finished = true;
  } catch (error) {
    turnTrace.fail(error);
    finished = true;
    throw error;
  } finally {
    turnTrace.end();
    // The caller stopped reading: let the turn clean up as it would without tracing.
    if (!finished) await events.return(undefined);
  }
}
