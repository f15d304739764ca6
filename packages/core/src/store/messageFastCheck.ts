import { MessageRoleSchema, MessageSchema, ToolCallSchema } from '../conversation/message.js';
import { isIsoTimestamp } from '../timestamp.js';

const ROLES: ReadonlySet<unknown> = new Set(MessageRoleSchema.options);

/**
 * The fields this check knows, in schema order. When `MessageSchema` or `ToolCallSchema` gains or
 * loses a field, the check turns itself off (every message then goes to zod) until it is updated.
 */
const ENABLED =
  Object.keys(MessageSchema.shape).join() ===
    'id,seq,role,content,agent,toolCalls,toolCallId,toolName,isError,durationMs,createdAt,metadata' &&
  Object.keys(ToolCallSchema.shape).join() === 'id,name,arguments';

/**
 * Whether `MessageSchema` certainly accepts `value`, checked without zod (zod v4 allocates a result
 * per field, about 1 µs per message on a store's hot path). `true` only for values zod accepts; `false`
 * means "ask zod", which also writes the error message. Unknown keys are allowed, as zod allows them.
 *
 * @param value what a caller passed as a message
 * @returns `true` when the value passes every rule of `MessageSchema`
 */
export function fastAcceptsMessage(value: unknown): boolean {
  if (!ENABLED || typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  const seq = m.seq;
  const durationMs = m.durationMs;
  return (
    nonEmptyString(m.id) &&
    typeof seq === 'number' &&
    Number.isSafeInteger(seq) &&
    seq > 0 &&
    ROLES.has(m.role) &&
    typeof m.content === 'string' &&
    optionalString(m.agent) &&
    (m.toolCalls === undefined || toolCalls(m.toolCalls)) &&
    optionalString(m.toolCallId) &&
    optionalString(m.toolName) &&
    (m.isError === undefined || typeof m.isError === 'boolean') &&
    (durationMs === undefined || (typeof durationMs === 'number' && Number.isFinite(durationMs) && durationMs >= 0)) &&
    isIsoTimestamp(m.createdAt) &&
    (m.metadata === undefined || plainRecord(m.metadata))
  );
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function toolCalls(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const call of value) {
    if (typeof call !== 'object' || call === null || Array.isArray(call)) return false;
    const c = call as Record<string, unknown>;
    if (!nonEmptyString(c.id) || !nonEmptyString(c.name) || typeof c.arguments !== 'string') return false;
  }
  return true;
}

/** A record zod's `z.record(z.string(), z.unknown())` accepts: a plain object whose keys are strings (no symbols). */
function plainRecord(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    !Object.hasOwn(value, 'constructor') &&
    Object.getOwnPropertySymbols(value).length === 0
  );
}
