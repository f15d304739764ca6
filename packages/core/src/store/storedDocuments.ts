/**
 * Validation of documents read back from storage, exactly as strict as their writes: the zod
 * schema (ISO-8601 timestamps included), the id rules of `isValidId`, and the metadata key rules of
 * `assertSafeMetadata`. A document a write would refuse is refused on read with an error naming
 * the document and its first bad field, and nothing of it is returned. Every `parseStored*` first
 * brings a document of an older `schemaVersion` up to the current one (`migrateDocument`, one
 * registry per kind) and refuses a newer one with `UnsupportedSchemaVersionError`; the returned
 * session, branch, message or episode has no `schemaVersion` (stores add it when they write, with
 * `withSchemaVersion`).
 */
import type { z } from 'zod';
import { type Checkpoint, type PendingWrite, PendingWriteSchema, parseCheckpoint } from '../conversation/checkpoint.js';
import { type Episode, EpisodeSchema } from '../conversation/episode.js';
import { type Message, MessageSchema } from '../conversation/message.js';
import { assertSafeMetadata } from '../conversation/metadata.js';
import { type DocumentKind, migrateFields, type StoredDocument } from '../conversation/schemaVersions.js';
import { type Branch, BranchSchema, type Session, SessionSchema } from '../conversation/session.js';
import { CheckpointCorruptError, DocumentCorruptError, InvalidInputError } from '../errors.js';
import { isValidId } from '../ids.js';
import { isIsoTimestamp } from '../timestamp.js';
import { fastCheckpointCopy } from './checkpointFastCheck.js';
import { fastAcceptsMessage } from './messageFastCheck.js';
import { fastStoredBranch, fastStoredSession } from './sessionFastCheck.js';

/** The first rule a document breaks: the field's path and what is wrong with it. */
export interface DocumentProblem {
  field: string;
  problem: string;
}

/** A schema-valid document, or the first rule it breaks. */
export type CheckedDocument<T> = { ok: true; data: T } | ({ ok: false } & DocumentProblem);

function schemaCheck<T>(
  schema: z.ZodType<T>,
  value: unknown,
  rules: (data: T) => DocumentProblem | undefined,
  fast?: (value: unknown) => T | undefined,
): CheckedDocument<T> {
  const quick = fast?.(value);
  if (quick !== undefined) {
    const broken = rules(quick);
    return broken === undefined ? { ok: true, data: quick } : { ok: false, ...broken };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, field: issue?.path.map(String).join('.') || '(root)', problem: issue?.message ?? 'invalid' };
  }
  const broken = rules(parsed.data);
  return broken === undefined ? { ok: true, data: parsed.data } : { ok: false, ...broken };
}

/** A problem when `value` is present and not a valid id. */
function idProblem(field: string, kind: string, value: unknown, optional = false): DocumentProblem | undefined {
  if (optional && value === undefined) return undefined;
  return isValidId(value) ? undefined : { field, problem: `${JSON.stringify(value)} is not a valid ${kind} id` };
}

/** A problem when `value` holds a key no store may hold (`$…`, `a.b`, NUL). */
function keysProblem(field: string, value: unknown): DocumentProblem | undefined {
  if (value === undefined) return undefined;
  try {
    assertSafeMetadata(field, value);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidInputError) return { field, problem: error.message };
    throw error;
  }
}

const first = (...problems: (DocumentProblem | undefined)[]): DocumentProblem | undefined =>
  problems.find((p) => p !== undefined);

/** Checks a session document against the rules of `createSession` and `updateSession`. */
export function checkSession(value: unknown): CheckedDocument<Session> {
  return schemaCheck(
    SessionSchema,
    value,
    (s) =>
      first(
        idProblem('id', 'session', s.id),
        idProblem('tenantId', 'tenant', s.tenantId, true),
        idProblem('userId', 'user', s.userId, true),
        keysProblem('metadata', s.metadata),
        keysProblem('state', s.state),
      ),
    fastStoredSession,
  );
}

/** Checks a branch document against the rules of `createSession` and `forkBranch`. */
export function checkBranch(value: unknown): CheckedDocument<Branch> {
  return schemaCheck(
    BranchSchema,
    value,
    (b) =>
      first(
        idProblem('id', 'branch', b.id),
        idProblem('sessionId', 'session', b.sessionId),
        b.parent === undefined ? undefined : idProblem('parent.branchId', 'branch', b.parent.branchId),
        keysProblem('state', b.state),
      ),
    fastStoredBranch,
  );
}

/** Checks an episode document against the rules of `saveEpisode`. */
export function checkEpisode(value: unknown): CheckedDocument<Episode> {
  return schemaCheck(EpisodeSchema, value, (e) =>
    first(
      idProblem('id', 'episode', e.id),
      idProblem('sessionId', 'session', e.sessionId),
      idProblem('tenantId', 'tenant', e.tenantId, true),
      idProblem('userId', 'user', e.userId, true),
      keysProblem('metadata', e.metadata),
    ),
  );
}

const MESSAGE_KEYS: ReadonlySet<string> = new Set(Object.keys(MessageSchema.shape));

function onlyMessageKeys(value: object): boolean {
  for (const key in value) if (!MESSAGE_KEYS.has(key)) return false;
  return true;
}

/**
 * Checks a message against the rules of `appendMessages` (without the seq order of a batch). The
 * common case, a message the fast pre-check accepts with no unknown keys, is returned as it is,
 * without zod (this runs once per message a read returns).
 */
export function checkMessage(value: unknown): CheckedDocument<Message> {
  const fast = fastAcceptsMessage(value) && onlyMessageKeys(value as object);
  const checked: CheckedDocument<Message> = fast
    ? { ok: true, data: value as Message }
    : schemaCheck(MessageSchema, value, () => undefined);
  if (!checked.ok || checked.data.metadata === undefined) return checked;
  const broken = keysProblem('metadata', checked.data.metadata);
  return broken === undefined ? checked : { ok: false, ...broken };
}

function corrupt(document: string, problem: DocumentProblem): DocumentCorruptError {
  return new DocumentCorruptError(
    `The ${document} fails its schema at ${problem.field}: ${problem.problem}; it was not loaded. Restore it from a backup or delete it.`,
    document,
    problem.field,
  );
}

function orThrow<T>(checked: CheckedDocument<T>, document: string): T {
  if (checked.ok) return checked.data;
  throw corrupt(document, checked);
}

/**
 * The fields of a stored document at the current version of `kind`, without `schemaVersion`; a
 * value that is not an object is returned as it is (its schema check reports it).
 * @throws {UnsupportedSchemaVersionError} for a newer version; {@link DocumentCorruptError} for a `schemaVersion` that is not a version
 */
function currentFields(kind: DocumentKind, value: unknown, document: string): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const stored = value as StoredDocument;
  const fields = migrateFields(kind, stored, document);
  if (fields === undefined)
    throw corrupt(document, {
      field: 'schemaVersion',
      problem: `${JSON.stringify(stored.schemaVersion)} is not a schema version (a whole number >= 1)`,
    });
  return fields;
}

/**
 * A session read from storage, checked as strictly as `createSession`/`updateSession` check it.
 *
 * @param value the parsed document (unknown keys are dropped)
 * @param document names it for the message (`'session "chat-1"'`, a file path)
 * @returns `{ id, tenantId?, userId?, status, createdAt, lastActivityAt, closedAt?, closedReason?, metadata, state, version }`
 * @throws {DocumentCorruptError} naming the document and its first bad field;
 *   {@link UnsupportedSchemaVersionError} when it was written by a newer Baton (the same for every `parseStored*`)
 * @example
 * ```ts
 * import { parseStoredSession } from '@baton/core/store-kit';
 * const session = parseStoredSession(JSON.parse(text), 'sessions/chat-1/session.json');
 * ```
 */
export function parseStoredSession(value: unknown, document: string): Session {
  return orThrow(checkSession(currentFields('session', value, document)), document);
}

/**
 * A branch read from storage (see {@link parseStoredSession}).
 * @returns `{ id, sessionId, parent?, createdAt, state, version }`
 * @throws {DocumentCorruptError} naming the document and its first bad field
 * @example
 * ```ts
 * import { parseStoredBranch } from '@baton/core/store-kit';
 * const branch = parseStoredBranch(doc, 'branch "main" of session "chat-1"');
 * ```
 */
export function parseStoredBranch(value: unknown, document: string): Branch {
  return orThrow(checkBranch(currentFields('branch', value, document)), document);
}

/**
 * A message read from storage (see {@link parseStoredSession}); a valid message with no unknown
 * keys is returned as it is (no copy).
 * @returns `{ id, seq, role, content, agent?, toolCalls?, toolCallId?, toolName?, isError?, durationMs?, createdAt, metadata? }`
 * @throws {DocumentCorruptError} naming the document and its first bad field
 * @example
 * ```ts
 * import { parseStoredMessage } from '@baton/core/store-kit';
 * const message = parseStoredMessage(JSON.parse(line), 'line 3 of messages/main.jsonl');
 * ```
 */
export function parseStoredMessage(value: unknown, document: string): Message {
  return orThrow(checkMessage(currentFields('message', value, document)), document);
}

/**
 * An episode read from storage (see {@link parseStoredSession}).
 * @returns the episode (unknown keys dropped)
 * @throws {DocumentCorruptError} naming the document and its first bad field
 * @example
 * ```ts
 * import { parseStoredEpisode } from '@baton/core/store-kit';
 * const episode = parseStoredEpisode(doc, 'episode "chat-1"');
 * ```
 */
export function parseStoredEpisode(value: unknown, document: string): Episode {
  return orThrow(checkEpisode(currentFields('episode', value, document)), document);
}

/**
 * A checkpoint read from storage: {@link parseCheckpoint} plus the id rules `saveCheckpoint`
 * applies (its `id`, `parentId`, `sessionId`, `branchId` and its pending requests' `id`s).
 *
 * @param value the parsed document or its JSON text
 * @param document names it for the message
 * @returns the checkpoint
 * @throws {CheckpointCorruptError} naming the document and its first bad field;
 *   {@link UnsupportedSchemaVersionError} when it was written by a newer Baton
 * @example
 * ```ts
 * import { parseStoredCheckpoint } from '@baton/core/store-kit';
 * const checkpoint = parseStoredCheckpoint(text, 'checkpoints/main/000000000001-cp-1.json');
 * ```
 */
export function parseStoredCheckpoint(value: unknown, document: string): Checkpoint {
  let checkpoint: Checkpoint;
  try {
    // A turn-end checkpoint of the current version (the one every resume reads) is checked without zod.
    const data = typeof value === 'string' ? parseJsonOrText(value) : value;
    checkpoint = fastCheckpointCopy(data) ?? parseCheckpoint(data, document);
  } catch (error) {
    if (!(error instanceof CheckpointCorruptError)) throw error;
    throw new CheckpointCorruptError(
      `${error.message} Checkpoint: ${document}. Restore it from a backup or delete it.`,
      { cause: error },
    );
  }
  const broken = first(
    idProblem('id', 'checkpoint', checkpoint.id),
    checkpoint.parentId === null ? undefined : idProblem('parentId', 'checkpoint', checkpoint.parentId),
    idProblem('sessionId', 'session', checkpoint.sessionId),
    idProblem('branchId', 'branch', checkpoint.branchId),
    ...checkpoint.pendingRequests.map((request, index) =>
      idProblem(`pendingRequests.${index}.id`, 'request', request.id),
    ),
  );
  if (broken !== undefined) {
    throw new CheckpointCorruptError(
      `The checkpoint ${document} fails its schema at ${broken.field}: ${broken.problem}; it was not loaded. Restore it from a backup or delete it.`,
    );
  }
  return checkpoint;
}

/** The value of a JSON text, or the text itself when it is not JSON (`parseCheckpoint` then reports it). */
function parseJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A pending write read from storage, checked with `PendingWriteSchema` as `putPendingWrites` checks it.
 * @returns `{ toolCallId, toolName, agent, content, isError, durationMs, createdAt, control? }`
 * @throws {CheckpointCorruptError} naming the document and its first bad field (a damaged pending write spoils its checkpoint)
 * @example
 * ```ts
 * import { parseStoredPendingWrite } from '@baton/core/store-kit';
 * const write = parseStoredPendingWrite(JSON.parse(line), 'line 1 of 000000000001-cp-1.pending.jsonl');
 * ```
 */
export function parseStoredPendingWrite(value: unknown, document: string): PendingWrite {
  const checked = schemaCheck(PendingWriteSchema, value, () => undefined);
  if (checked.ok) return checked.data;
  throw new CheckpointCorruptError(
    `The pending write ${document} fails its schema at ${checked.field}: ${checked.problem}; its checkpoint was not loaded. Restore it from a backup or delete it.`,
  );
}

/** The fields `updateSession` may change, each optional, with the session schema's rules (unknown keys are dropped by `parse`). */
export const SessionChangeSchema = SessionSchema.pick({
  status: true,
  closedAt: true,
  closedReason: true,
  lastActivityAt: true,
  metadata: true,
  state: true,
  userId: true,
}).partial();

/**
 * Checks the fields of an `updateSession` change with the session schema, so an update cannot
 * store what a read would refuse (`lastActivityAt: 'yesterday'`, `status: 'paused'`).
 *
 * @param change the caller's change; fields the schema does not name are ignored here
 * @throws {InvalidInputError} naming the first bad field
 * @example
 * ```ts
 * assertSessionChangeShape({ lastActivityAt: 'yesterday' }); // throws InvalidInputError
 * ```
 */
export function assertSessionChangeShape(change: unknown): void {
  if (onlyActivity(change)) return;
  const parsed = SessionChangeSchema.safeParse(change);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  throw new InvalidInputError(
    `The session change is invalid at ${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message}.`,
  );
}

/**
 * Whether `change` is the change every turn makes, `{ lastActivityAt }` with a valid timestamp (and
 * nothing else): what `SessionChangeSchema` accepts, checked without zod (it allocates a result per field).
 */
function onlyActivity(change: unknown): boolean {
  if (typeof change !== 'object' || change === null) return false;
  for (const key in change) if (key !== 'lastActivityAt') return false;
  return (
    Object.getPrototypeOf(change) === Object.prototype &&
    isIsoTimestamp((change as { lastActivityAt?: unknown }).lastActivityAt)
  );
}

/**
 * Checks a document a store is about to write with the rules its read will apply.
 * @param checked what `checkSession`, `checkBranch`, … found
 * @param what names the document (`'session "chat-1"'`)
 * @throws {InvalidInputError} naming the first bad field
 */
export function assertWritable<T>(checked: CheckedDocument<T>, what: string): T {
  if (checked.ok) return checked.data;
  throw new InvalidInputError(`The ${what} is invalid at ${checked.field}: ${checked.problem}.`);
}
