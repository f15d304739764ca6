import { type Session, SessionSchema } from '../conversation/session.js';
import { isIsoTimestamp } from '../timestamp.js';

/**
 * The fields this check knows, in schema order. When `SessionSchema` gains or loses a field, the
 * check turns itself off (every new session then goes to zod) until it is updated.
 */
const ENABLED = Object.keys(SessionSchema.shape).join() === 'id,tenantId,userId,status,createdAt,lastActivityAt,closedAt,closedReason,metadata,state,version';

/** Whether `value` is a plain object (not an array, not a class instance). */
function isRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Whether a session document built by `newSession` passes `SessionSchema` without asking zod
 * (zod v4 allocates a result per field, a few µs per new session on a store's hot path). It checks
 * the fields `newSession` does not check itself: its ids, metadata keys and state keys are asserted
 * before (so only their types are looked at here), and the rest must be a new active session at
 * version 1 with ISO-8601 timestamps. `false` means "ask zod", which also writes the error message.
 *
 * @param session the document `newSession` built
 * @returns true when zod would accept it
 */
export function fastAcceptsNewSession(session: Session): boolean {
  return (
    ENABLED &&
    typeof session.id === 'string' &&
    (session.tenantId === undefined || typeof session.tenantId === 'string') &&
    (session.userId === undefined || typeof session.userId === 'string') &&
    session.status === 'active' &&
    isIsoTimestamp(session.createdAt) &&
    isIsoTimestamp(session.lastActivityAt) &&
    session.closedAt === undefined &&
    session.closedReason === undefined &&
    isRecord(session.metadata) &&
    isRecord(session.state) &&
    session.version === 1
  );
}
