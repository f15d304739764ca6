import type { Tracer } from '@opentelemetry/api';

/**
 * How a workflow traces its turns with OpenTelemetry (see the package README, "Tracing").
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * builder.telemetry({ tracer: trace.getTracer('support-desk'), captureContent: true });
 * ```
 */
export interface TelemetryOptions {
  /**
   * The tracer spans are made with (default: `trace.getTracer('@baton/handoff')` of the globally
   * registered provider, looked up at each turn; without an SDK it records nothing).
   */
  tracer?: Tracer;
  /**
   * Whether message contents go on spans (default `false`): the user's text and each agent's last
   * answer as `gen_ai.input.messages` / `gen_ai.output.messages`, tool arguments and results as
   * `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`. They may hold personal data.
   */
  captureContent?: boolean;
}
