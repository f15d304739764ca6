/**
 * Rules every store shares, so `InMemoryStore`, `FileStore` and `MongoStore` cannot drift apart:
 * id and metadata validation, how a branch's parent reference is followed, which branches a delete
 * takes, which checkpoints retention drops.
 */
import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  type PendingWrite,
  PendingWriteSchema,
  parseCheckpoint,
} from '../conversation/checkpoint.js';
import { type Episode, EpisodeSchema } from '../conversation/episode.js';
import { type Message, MessageSchema } from '../conversation/message.js';
import { assertSafeMetadata } from '../conversation/metadata.js';
import { type Branch, MAIN_BRANCH, type Session, type State } from '../conversation/session.js';
import {
  BranchHasChildrenError,
  CheckpointCorruptError,
  CheckpointInUseError,
  ConcurrencyError,
  InvalidInputError,
  NotFoundError,
} from '../errors.js';
import { assertValidId } from '../ids.js';
import { fastCheckpointCopy } from './checkpointFastCheck.js';
import { cloneData } from './cloneData.js';
import { fastAcceptsMessage } from './messageFastCheck.js';
import { fastAcceptsNewSession } from './sessionFastCheck.js';
import type {
  CheckpointRetention,
  CreateSessionInput,
  ReadMessagesOptions,
  SessionChange,
  SessionFilter,
  StoreBatch,
} from './store.js';
import { assertSessionChangeShape, assertWritable, checkSession } from './storedDocuments.js';

/**
 * Validates a session id.
 * @throws {InvalidIdError} for ids such as `../x`, `a/b` or `$gt`
 */
export function assertSessionId(id: unknown): string {
  return assertValidId('session', id);
}

/**
 * Validates a branch id (branch ids name files in `FileStore`, so they follow the same rule as session ids).
 * @throws {InvalidIdError} for ids such as `../x`, `a/b` or `$gt`
 */
export function assertBranchId(id: unknown): string {
  return assertValidId('branch', id);
}

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

/**
 * Validates messages before an append: the schema (zod, unless {@link fastAcceptsMessage} already
 * knows it passes), safe metadata, and strictly ascending `seq`.
 * @throws {InvalidInputError} naming the first bad message
 */
export function assertMessages(messages: readonly Message[]): void {
  let previous = 0;
  for (const message of messages) {
    const parsed = fastAcceptsMessage(message) ? undefined : MessageSchema.safeParse(message);
    if (parsed !== undefined && !parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInputError(
        `Message seq ${String(message?.seq)} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
      );
    }
    if (message.metadata !== undefined) assertSafeMetadata(`message ${message.seq} metadata`, message.metadata);
    if (message.seq <= previous)
      throw new InvalidInputError(
        `Messages must be appended in ascending seq order; ${message.seq} follows ${previous}.`,
      );
    previous = message.seq;
  }
}

/** Whether two messages at one seq are the same message (a retried append), by id. */
export function sameMessage(a: Pick<Message, 'id'>, b: Pick<Message, 'id'>): boolean {
  return a.id === b.id;
}

/** Where a branch stands before an append (see {@link planAppend}). */
export interface BranchEnd {
  /** The first seq the branch owns: `parent.atSeq + 1` for a fork, 1 for `main`. */
  firstOwnSeq: number;
  /** The branch's last seq, `firstOwnSeq - 1` when it owns no message yet. */
  lastSeq: number;
  /** The branch's own stored message at `seq`, for every seq of the batch that is `<= lastSeq`. */
  storedAt: (seq: number) => Pick<Message, 'id'> | undefined;
}

/**
 * Decides what an append stores. Messages already stored (same seq, same id) are skipped, so a
 * retried append is a no-op; the rest must continue the branch without a gap.
 *
 * @param branchId for messages
 * @param messages validated by {@link assertMessages} (ascending seq)
 * @param end where the branch stands
 * @returns the messages to store, in order
 * @throws {ConcurrencyError} when a seq already holds another message (another writer appended first);
 *   {@link InvalidInputError} when a seq belongs to a fork's parent or leaves a gap
 */
export function planAppend(branchId: string, messages: readonly Message[], end: BranchEnd): Message[] {
  const fresh: Message[] = [];
  let next = end.lastSeq + 1;
  for (const message of messages) {
    if (message.seq < end.firstOwnSeq) {
      throw new InvalidInputError(
        `Seq ${message.seq} belongs to the parent of fork ${JSON.stringify(branchId)}; the fork's own messages start at seq ${end.firstOwnSeq}.`,
      );
    }
    if (message.seq <= end.lastSeq) {
      const stored = end.storedAt(message.seq);
      if (stored === undefined || !sameMessage(stored, message)) {
        throw new ConcurrencyError(
          `Seq ${message.seq} of branch ${JSON.stringify(branchId)} already holds another message (id ${JSON.stringify(stored?.id)}, not ${JSON.stringify(message.id)}): another writer appended first. Reload the branch and retry.`,
        );
      }
      continue;
    }
    if (message.seq !== next) {
      throw new InvalidInputError(
        `Seq ${message.seq} would leave a gap in branch ${JSON.stringify(branchId)}: the next seq is ${next}. Append messages with consecutive seqs.`,
      );
    }
    fresh.push(message);
    next += 1;
  }
  return fresh;
}

/**
 * Validates a checkpoint before it is saved: its schema, then its session, branch and own ids and
 * its pending requests' ids (the rules `parseStoredCheckpoint` applies on read).
 * @returns the parsed checkpoint
 * @throws {CheckpointCorruptError} when it fails the schema or is not of {@link CHECKPOINT_SCHEMA_VERSION}; {@link InvalidIdError} for unsafe ids
 */
export function assertCheckpoint(checkpoint: Checkpoint): Checkpoint {
  const version = (checkpoint as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== CHECKPOINT_SCHEMA_VERSION) {
    throw new CheckpointCorruptError(
      `A checkpoint is saved at schemaVersion ${CHECKPOINT_SCHEMA_VERSION}, not ${JSON.stringify(version)}; it was not saved.`,
    );
  }
  return assertCheckpointIds(fastCheckpointCopy(checkpoint) ?? parseCheckpoint(checkpoint));
}

/**
 * {@link assertCheckpoint}, returning a deep copy that shares no object with `checkpoint`: what a
 * store that keeps objects (`InMemoryStore`) stores. The common turn-end checkpoint is checked and
 * copied in one pass without zod ({@link fastCheckpointCopy}).
 * @throws what {@link assertCheckpoint} throws
 */
export function copyValidCheckpoint(checkpoint: Checkpoint): Checkpoint {
  const fast = fastCheckpointCopy(checkpoint);
  return fast === undefined ? cloneData(assertCheckpoint(checkpoint)) : assertCheckpointIds(fast);
}

function assertCheckpointIds(valid: Checkpoint): Checkpoint {
  assertSessionId(valid.sessionId);
  assertBranchId(valid.branchId);
  assertValidId('checkpoint', valid.id);
  if (valid.parentId !== null) assertValidId('checkpoint', valid.parentId);
  // A request id is a route segment (`POST /sessions/:id/requests/:requestId`): the id rule, as a read applies it.
  for (const request of valid.pendingRequests) assertValidId('request', request.id);
  return valid;
}

/**
 * Validates pending writes before they are saved.
 * @returns the parsed writes
 * @throws {InvalidInputError} naming the first bad write
 */
export function assertPendingWrites(writes: readonly PendingWrite[]): PendingWrite[] {
  return writes.map((write, index) => {
    const parsed = PendingWriteSchema.safeParse(write);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInputError(
        `Pending write ${index} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
      );
    }
    return parsed.data;
  });
}

/** One piece of a branch's history: `branch`'s own messages with `fromSeq <= seq <= throughSeq`. */
export interface LineageSegment {
  branch: Branch;
  fromSeq: number;
  throughSeq: number;
}

/**
 * Where a branch's messages live: its ancestors' prefixes (root first) and then its own, each
 * clipped to the requested range. A fork at `atSeq` reads its parent's messages `1..atSeq`.
 *
 * @param getBranch looks a branch of the session up (sync)
 * @throws {NotFoundError} when the branch or an ancestor is missing
 */
export function branchLineage(
  branchId: string,
  getBranch: (id: string) => Branch | undefined,
  sessionId: string,
  options: ReadMessagesOptions = {},
): LineageSegment[] {
  const chain: Branch[] = [];
  let current = getBranch(branchId);
  if (current === undefined)
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`,
    );
  while (current !== undefined) {
    chain.unshift(current);
    if (current.parent === undefined) break;
    const parentId: string = current.parent.branchId;
    current = getBranch(parentId);
    if (current === undefined)
      throw new NotFoundError(
        `Parent branch ${JSON.stringify(parentId)} of session ${JSON.stringify(sessionId)} does not exist.`,
      );
  }
  const from = options.fromSeq ?? 1;
  const through = options.throughSeq ?? Number.POSITIVE_INFINITY;
  const segments: LineageSegment[] = [];
  chain.forEach((branch, index) => {
    const start = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
    const child = chain[index + 1];
    const end = child?.parent === undefined ? Number.POSITIVE_INFINITY : child.parent.atSeq;
    const fromSeq = Math.max(start, from);
    const throughSeq = Math.min(end, through);
    if (fromSeq <= throughSeq) segments.push({ branch, fromSeq, throughSeq });
  });
  return segments;
}

/**
 * The branches a delete takes: `branchId` and, when `recursive`, every fork below it (children first).
 * @throws {InvalidInputError} for `main`; {@link BranchHasChildrenError} when forks refer to it and
 *   `recursive` is not set; {@link NotFoundError} when it does not exist
 */
export function ensureBranchDeletable(
  branchId: string,
  branches: readonly Branch[],
  options: { recursive?: boolean },
): string[] {
  if (branchId === MAIN_BRANCH)
    throw new InvalidInputError('The main branch cannot be deleted; delete the session instead.');
  if (!branches.some((b) => b.id === branchId))
    throw new NotFoundError(`Branch ${JSON.stringify(branchId)} does not exist.`);
  const children = branches.filter((b) => b.parent?.branchId === branchId);
  if (children.length > 0 && !options.recursive) {
    throw new BranchHasChildrenError(
      `Branch ${JSON.stringify(branchId)} has forks (${children.map((c) => c.id).join(', ')}); deleting it would orphan them. Pass { recursive: true } to delete them too.`,
    );
  }
  return [...children.flatMap((c) => ensureBranchDeletable(c.id, branches, { recursive: true })), branchId];
}

/**
 * The ids of checkpoints outside the retention. The newest checkpoint is always kept.
 * @param checkpoints oldest first
 */
export function checkpointsToPrune(
  checkpoints: readonly Pick<Checkpoint, 'id' | 'createdAt'>[],
  retention: CheckpointRetention,
): string[] {
  const now = Date.now();
  return checkpoints
    .filter((checkpoint, index) => {
      const fromNewest = checkpoints.length - 1 - index;
      if (fromNewest === 0) return false;
      const tooMany = retention.last !== undefined && fromNewest >= retention.last;
      const tooOld = retention.maxAgeMs !== undefined && now - Date.parse(checkpoint.createdAt) > retention.maxAgeMs;
      return tooMany || tooOld;
    })
    .map((c) => c.id);
}

/**
 * Checks that checkpoint `id` may be deleted from a branch: it must not be the newest (a paused
 * turn resumes from it).
 * @param manifest the branch's checkpoints, oldest first
 * @returns whether the branch holds checkpoint `id`
 * @throws {CheckpointInUseError} when `id` is the branch's newest checkpoint
 * @example
 * ```ts
 * import { ensureCheckpointDeletable } from '@baton/core/store-kit';
 * ensureCheckpointDeletable('main', 'cp-1', [{ id: 'cp-1' }, { id: 'cp-2' }]); // true
 * ensureCheckpointDeletable('main', 'cp-2', [{ id: 'cp-1' }, { id: 'cp-2' }]); // throws CheckpointInUseError
 * ```
 */
export function ensureCheckpointDeletable(
  branchId: string,
  id: string,
  manifest: readonly Pick<Checkpoint, 'id'>[],
): boolean {
  if (manifest.at(-1)?.id === id) throw new CheckpointInUseError(id, branchId);
  return manifest.some((c) => c.id === id);
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

/**
 * The branch after a compare-and-set state change (`state` already validated by {@link branchState}).
 * @throws {ConcurrencyError} on a stale version
 */
export function changedBranch(current: Branch, state: State, expectedVersion: number): Branch {
  if (current.version !== expectedVersion) {
    throw new ConcurrencyError(
      `Branch ${JSON.stringify(current.id)} is at version ${current.version}, not ${expectedVersion}. Reload and retry.`,
    );
  }
  return { ...current, state, version: current.version + 1 };
}

/**
 * Checks that a batch's checkpoint belongs to the batch's session branch.
 * @throws {InvalidInputError} naming the checkpoint otherwise
 */
export function assertBatchCheckpoint(batch: Pick<StoreBatch, 'sessionId' | 'branchId' | 'checkpoint'>): void {
  const checkpoint = batch.checkpoint;
  if (checkpoint === undefined || (checkpoint.sessionId === batch.sessionId && checkpoint.branchId === batch.branchId))
    return;
  throw new InvalidInputError(
    `A batch of session ${JSON.stringify(batch.sessionId)} branch ${JSON.stringify(batch.branchId)} cannot save checkpoint ${JSON.stringify(checkpoint.id)} of another branch.`,
  );
}
