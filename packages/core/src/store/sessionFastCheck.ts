import { type Branch, BranchParentSchema, BranchSchema, type Session, SessionSchema } from '../conversation/session.js';
import { isIsoTimestamp } from '../timestamp.js';

/**
 * The fields this check knows, in schema order. When `SessionSchema` gains or loses a field, the
 * check turns itself off (every new session then goes to zod) until it is updated.
 */
const ENABLED =
  Object.keys(SessionSchema.shape).join() ===
  'id,tenantId,userId,status,createdAt,lastActivityAt,closedAt,closedReason,metadata,state,version';

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

const BRANCH_ENABLED =
  Object.keys(BranchSchema.shape).join() === 'id,sessionId,parent,createdAt,state,version' &&
  Object.keys(BranchParentSchema.shape).join() === 'branchId,atSeq';

/** Whether `value` is a whole number zod's `.int()` accepts (a safe integer) and at least `min`. */
function wholeNumber(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

/** Whether an optional field is absent or a string; a key present with `undefined` is left to zod. */
function optionalString(value: Record<string, unknown>, key: string): boolean {
  const field = value[key];
  return field === undefined ? !(key in value) : typeof field === 'string';
}

/**
 * The copy `z.record(z.string(), z.unknown())` gives of `value` (own enumerable string keys but
 * `__proto__`, values shared), or `undefined` to leave it to zod: not a plain object, an own
 * `constructor` (zod then looks at it), or a symbol key.
 */
function recordCopy(value: unknown): Record<string, unknown> | undefined {
  if (!isRecord(value) || Object.hasOwn(value as object, 'constructor')) return undefined;
  const input = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Reflect.ownKeys(input)) {
    if (typeof key !== 'string') return undefined;
    if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(input, key)) continue;
    copy[key] = input[key];
  }
  return copy;
}

/**
 * What `SessionSchema.safeParse(value)` gives for a valid stored session (known keys in schema
 * order, unknown keys dropped, `metadata` and `state` copied one level deep), checked without zod
 * (zod v4 allocates a result per field, and a worker reads the session on every turn). `undefined`
 * means "ask zod", which also writes the error message: anything that fails a rule here, and the
 * rare shapes whose handling by zod this check does not copy.
 *
 * @param value a stored session's fields (`schemaVersion` already removed)
 * @returns the session, sharing only primitive values and the values inside metadata and state with `value`
 */
export function fastStoredSession(value: unknown): Session | undefined {
  if (!ENABLED || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (
    typeof v.id !== 'string' ||
    !optionalString(v, 'tenantId') ||
    !optionalString(v, 'userId') ||
    (v.status !== 'active' && v.status !== 'closed') ||
    !isIsoTimestamp(v.createdAt) ||
    !isIsoTimestamp(v.lastActivityAt) ||
    !(v.closedAt === undefined ? !('closedAt' in v) : isIsoTimestamp(v.closedAt)) ||
    !optionalString(v, 'closedReason') ||
    !wholeNumber(v.version, 1)
  ) {
    return undefined;
  }
  const metadata = recordCopy(v.metadata);
  const state = recordCopy(v.state);
  if (metadata === undefined || state === undefined) return undefined;
  // Built in schema order, as zod returns it.
  const session = { id: v.id } as Session;
  if (v.tenantId !== undefined) session.tenantId = v.tenantId as string;
  if (v.userId !== undefined) session.userId = v.userId as string;
  session.status = v.status;
  session.createdAt = v.createdAt;
  session.lastActivityAt = v.lastActivityAt;
  if (v.closedAt !== undefined) session.closedAt = v.closedAt as string;
  if (v.closedReason !== undefined) session.closedReason = v.closedReason as string;
  session.metadata = metadata;
  session.state = state;
  session.version = v.version;
  return session;
}

/**
 * What `BranchSchema.safeParse(value)` gives for a valid stored branch, checked without zod (see
 * {@link fastStoredSession}); `undefined` means "ask zod".
 *
 * @param value a stored branch's fields (`schemaVersion` already removed)
 */
export function fastStoredBranch(value: unknown): Branch | undefined {
  if (!BRANCH_ENABLED || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (
    typeof v.id !== 'string' ||
    typeof v.sessionId !== 'string' ||
    !isIsoTimestamp(v.createdAt) ||
    !wholeNumber(v.version, 1)
  )
    return undefined;
  let parent: Branch['parent'];
  if (v.parent !== undefined) {
    const p = v.parent as Record<string, unknown>;
    if (
      typeof p !== 'object' ||
      p === null ||
      Array.isArray(p) ||
      typeof p.branchId !== 'string' ||
      !wholeNumber(p.atSeq, 0)
    )
      return undefined;
    parent = { branchId: p.branchId, atSeq: p.atSeq };
  } else if ('parent' in v) return undefined;
  const state = recordCopy(v.state);
  if (state === undefined) return undefined;
  return parent === undefined
    ? { id: v.id, sessionId: v.sessionId, createdAt: v.createdAt, state, version: v.version }
    : { id: v.id, sessionId: v.sessionId, parent, createdAt: v.createdAt, state, version: v.version };
}
