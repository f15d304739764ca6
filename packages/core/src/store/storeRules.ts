/**
 * Rules every store shares, so `InMemoryStore`, `FileStore` and `MongoStore` cannot drift apart:
 * here sessions and episodes; ids, messages, checkpoints and branches in their own modules
 * (storeIds.ts, messageRules.ts, checkpointRules.ts, branchRules.ts), re-exported from here.
 */
import { type Episode, EpisodeSchema } from '../conversation/episode.js';
import { assertSafeMetadata } from '../conversation/metadata.js';
import type { Session, State } from '../conversation/session.js';
import { ConcurrencyError, InvalidInputError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { cloneData } from './cloneData.js';
import { fastAcceptsNewSession } from './sessionFastCheck.js';
import type { CreateSessionInput, SessionChange, SessionFilter } from './store.js';
import { assertSessionChangeShape, assertWritable, checkSession } from './storedDocuments.js';
import { assertSessionId } from './storeIds.js';

export { branchLineage, changedBranch, ensureBranchDeletable, type LineageSegment } from './branchRules.js';
export {
  assertBatchCheckpoint,
  assertCheckpoint,
  assertPendingWrites,
  checkpointsToPrune,
  copyValidCheckpoint,
  ensureCheckpointDeletable,
} from './checkpointRules.js';
export { assertMessages, type BranchEnd, planAppend, sameMessage } from './messageRules.js';
export { assertBranchId, assertSessionId } from './storeIds.js';

/**
 * Builds a new session document from `createSession` input: ids and metadata validated, version 1.
 * @throws {InvalidIdError} for an unsafe session, tenant or user id; {@link InvalidInputError} for unsafe metadata keys or a
 *   `createdAt` that is not an ISO-8601 UTC timestamp
 */
export function newSession(input: CreateSessionInput): Session {
  assertSessionId(input.id);
  if (input.tenantId !== undefined) assertValidId('tenant', input.tenantId);
  if (input.userId !== undefined) assertValidId('user', input.userId);
  const createdAt = input.createdAt ?? new Date().toISOString();
  const session: Session = {
    id: input.id,
    status: 'active',
    createdAt,
    lastActivityAt: createdAt,
    metadata: cloneData(assertSafeMetadata('session.metadata', input.metadata ?? {})),
    state: cloneData(assertSafeMetadata('session.state', input.state ?? {})),
    version: 1,
  };
  if (input.tenantId !== undefined) session.tenantId = input.tenantId;
  if (input.userId !== undefined) session.userId = input.userId;
  // Built here from checked parts: zod only when the hand check does not pass (it writes the message).
  if (!fastAcceptsNewSession(session)) assertWritable(checkSession(session), `session ${JSON.stringify(input.id)}`);
  return session;
}

/**
 * Validates branch state for `forkBranch` and `updateBranch` (the same key rules as metadata:
 * no `$` or `.` keys, no `__proto__`, `constructor` or `prototype` at any depth).
 * @param where names the field, for the message (`'branch.state'`)
 * @returns a copy of `state`, sharing nothing with it
 * @throws {InvalidInputError} naming the first bad key
 */
export function branchState(state: State, where = 'branch.state'): State {
  return cloneData(assertSafeMetadata(where, state));
}

/** The fields `updateSession` may change; anything else in a change object is ignored. */
const SESSION_CHANGE_KEYS = [
  'status',
  'closedAt',
  'closedReason',
  'lastActivityAt',
  'metadata',
  'state',
  'userId',
] as const;

/**
 * Validates a session change the same way in every store: first the keys, on the caller's object as
 * given (before any schema parse could drop a key): safe metadata and state keys (see
 * {@link assertSafeMetadata}) and a safe `userId`; then the fields with the session schema, so an
 * update cannot store what a read would refuse (`lastActivityAt: 'yesterday'`, `status: 'paused'`).
 * @throws {InvalidInputError} for unsafe metadata or state keys or a field of the wrong type; {@link InvalidIdError} for an unsafe `userId`
 * @example
 * ```ts
 * import { assertSessionChange } from '@baton/core/store-kit';
 * assertSessionChange({ lastActivityAt: 'yesterday' }); // throws InvalidInputError
 * ```
 */
export function assertSessionChange(change: SessionChange): void {
  if (change === null || typeof change !== 'object') return;
  if (change.metadata !== undefined) assertSafeMetadata('session.metadata', change.metadata);
  if (change.state !== undefined) assertSafeMetadata('session.state', change.state);
  if (change.userId !== undefined) assertValidId('user', change.userId);
  assertSessionChangeShape(change);
}

/**
 * The session after `change`: only the changeable fields are taken (never `id`, `tenantId` or
 * `version`), metadata and state are validated, and `version` is bumped by one.
 *
 * @param session the stored session
 * @param change the caller's change
 * @returns a new session object (`session` is not modified)
 * @throws {InvalidInputError} for unsafe metadata or state keys or a field of the wrong type (a non-ISO `lastActivityAt`);
 *   {@link InvalidIdError} for an unsafe `userId`
 */
export function applySessionChange(session: Session, change: SessionChange): Session {
  assertSessionChange(change);
  // `{ ...session, version }` in two steps: V8 runs a spread followed by more keys in a slow path.
  const next: Session = Object.hasOwn(session, '__proto__') ? { ...session } : Object.assign({}, session);
  next.version = session.version + 1;
  for (const key of SESSION_CHANGE_KEYS) {
    const value = change[key];
    if (value === undefined) continue;
    (next as unknown as Record<string, unknown>)[key] = cloneData(value);
  }
  return next;
}

/** Whether a session passes a `listSessions` filter. */
export function matchesSessionFilter(session: Session, filter: SessionFilter): boolean {
  return (
    (filter.tenantId === undefined || session.tenantId === filter.tenantId) &&
    (filter.userId === undefined || session.userId === filter.userId) &&
    (filter.status === undefined || session.status === filter.status) &&
    (filter.activeBefore === undefined || session.lastActivityAt < filter.activeBefore)
  );
}

/**
 * Validates an episode before it is saved.
 * @throws {InvalidInputError} when it fails the schema; {@link InvalidIdError} for unsafe ids
 */
export function assertEpisode(episode: Episode): Episode {
  const parsed = EpisodeSchema.safeParse(episode);
  if (!parsed.success) throw new InvalidInputError(`Episode is invalid: ${parsed.error.issues[0]?.message}.`);
  assertValidId('episode', episode.id);
  assertSessionId(episode.sessionId);
  if (episode.tenantId !== undefined) assertValidId('tenant', episode.tenantId);
  if (episode.userId !== undefined) assertValidId('user', episode.userId);
  if (episode.metadata !== undefined) assertSafeMetadata('episode.metadata', episode.metadata);
  return parsed.data;
}

/**
 * The session after a compare-and-set change (see {@link applySessionChange}).
 * @throws {ConcurrencyError} on a stale version; what `applySessionChange` throws
 */
export function changedSession(current: Session, change: SessionChange, expectedVersion: number): Session {
  if (current.version !== expectedVersion) {
    throw new ConcurrencyError(
      `Session ${JSON.stringify(current.id)} is at version ${current.version}, not ${expectedVersion}: another writer changed it. Reload and retry.`,
    );
  }
  return applySessionChange(current, change);
}
