import { isSpanContextValid, type SpanContext, TraceFlags } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A span context as a W3C Trace Context `traceparent` header value (`00-<trace id>-<span id>-<flags>`).
 *
 * @returns the header value, or `undefined` for an invalid (non-recording, no-SDK) span context
 * @example
 * ```ts
 * formatTraceparent(span.spanContext()); // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 * ```
 */
export function formatTraceparent(context: SpanContext): string | undefined {
  if (!isSpanContextValid(context)) return undefined;
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Parses a W3C Trace Context `traceparent` value (version `00`) into a remote span context, for a span link.
 *
 * @returns the span context, or `undefined` when `value` is missing or malformed
 */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  const match = value === undefined ? null : TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const context: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : undefined;
}
