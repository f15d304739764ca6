/** MongoStore's session operations (collection `sessions`, `_id` = session id). */
import {
  assertValidId,
  type Branch,
  ConcurrencyError,
  type CreateSessionInput,
  type EraseUserInput,
  type EraseUserResult,
  InvalidInputError,
  MAIN_BRANCH,
  NotFoundError,
  type Session,
  type SessionChange,
  type SessionFilter,
  type TenantScope,
  type UpdateOptions,
} from '@baton/core';
import {
  assertSessionChange,
  assertSessionId,
  newSession,
  parseStoredSession,
  SCHEMA_VERSIONS,
  SessionChangeSchema,
} from '@baton/core/store-kit';
import type { Filter } from 'mongodb';
import {
  assertMilliseconds,
  assertTimestamp,
  assertWholeNumber,
  optionsObject,
  tenantFilter,
  tenantMatch,
} from '../collections/inputGuards.js';
import type { SessionDoc } from '../collections/mongoCollections.js';
import { branchKey, type MongoContext } from '../collections/mongoContext.js';
import { isDuplicateKeyError, misplacedDocument } from '../collections/mongoErrors.js';
import { changeDigest, compareAndSet } from './compareAndSet.js';
import { deleteSessionAssets } from './mongoAssets.js';

/** How many session ids one bulk delete names. */
const DELETE_BATCH = 500;

/** The fields an `updateSession` change may set (those of `SessionChangeSchema`), in its order. */
const SESSION_CHANGE_FIELDS = Object.keys(SessionChangeSchema.shape) as (keyof SessionChange)[];

/**
 * A session as the API returns it: the document checked as strictly as `createSession` checks it
 * (bookkeeping fields dropped).
 * @throws {DocumentCorruptError} when a field fails the rules or `id` is not the document's `_id`
 */
export function toSession(doc: SessionDoc): Session {
  const document = `session document ${JSON.stringify(doc._id)}`;
  const session = parseStoredSession(doc, document);
  if (session.id !== doc._id) throw misplacedDocument(document, 'id', session.id);
  return session;
}

/** Creates the session and its `main` branch (two writes; the branch first, so a retry can finish a half-done create). */
export async function createSession(context: MongoContext, input: CreateSessionInput): Promise<Session> {
  const session = newSession(input);
  const main: Branch = { id: MAIN_BRANCH, sessionId: session.id, createdAt: session.createdAt, state: {}, version: 1 };
  try {
    await context.collections.branches.insertOne({
      schemaVersion: SCHEMA_VERSIONS.branch,
      _id: branchKey(session.id, MAIN_BRANCH),
      ...main,
      ...(session.tenantId === undefined ? {} : { tenantId: session.tenantId }),
      order: context.newOrder(),
    });
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
  }
  try {
    await context.collections.sessions.insertOne({
      schemaVersion: SCHEMA_VERSIONS.session,
      _id: session.id,
      ...session,
      order: context.newOrder(),
    });
  } catch (error) {
    if (isDuplicateKeyError(error))
      throw new ConcurrencyError(`Session ${JSON.stringify(session.id)} already exists.`, { cause: error });
    throw error;
  }
  context.branches.replace(session.id, [main]);
  context.branches.setLastSeq(session.id, MAIN_BRANCH, 0);
  context.tenants.set(session.id, session.tenantId);
  return session;
}

/** One read of the session (the tenant in its filter), `undefined` when missing or another tenant's; see `Store.getSession`. */
export async function getSession(context: MongoContext, id: string, scope?: TenantScope): Promise<Session | undefined> {
  const doc = await context.collections.sessions.findOne({ _id: assertSessionId(id), ...tenantMatch(scope) });
  if (doc === null) return undefined;
  context.tenants.set(doc._id, doc.tenantId);
  return toSession(doc);
}

/** Compare-and-set update: one `findAndModify` (plus a version claim on FerretDB); a read only when it did not match. */
export async function updateSession(
  context: MongoContext,
  id: string,
  change: SessionChange,
  options: UpdateOptions,
): Promise<Session> {
  assertSessionId(id);
  const { expectedVersion, ...scope } = optionsObject('updateSession options', options);
  const version = assertWholeNumber('expectedVersion', expectedVersion, 1);
  const set = sessionChangeSet(change);
  const digest = changeDigest(set);
  const filter = { _id: id, ...tenantMatch(scope) };
  const { sessions } = context.collections;
  const updated = await compareAndSet(context, {
    kind: 'session',
    key: id,
    sessionId: id,
    expectedVersion: version,
    set,
    digest,
    apply: (fields, lastChange) =>
      sessions.findOneAndUpdate(
        { ...filter, version },
        { $set: { ...fields, lastChange }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      ),
    read: () => sessions.findOne(filter),
    notFound: () => new NotFoundError(`Session ${JSON.stringify(id)} does not exist.`),
    stale: (current) =>
      new ConcurrencyError(
        current.version === version
          ? `Session ${JSON.stringify(id)} is being updated from version ${version} by another writer. Reload and retry.`
          : `Session ${JSON.stringify(id)} is at version ${current.version}, not ${version}: another writer changed it. Reload and retry.`,
      ),
  });
  return toSession(updated);
}

/**
 * The `$set` of a session change, built field by field from the changeable fields only (anything
 * else, such as `id`, `tenantId` or `version`, is ignored, as in every store).
 * @throws {InvalidInputError} for a wrong type, or unsafe metadata/state keys; {@link InvalidIdError} for an unsafe userId
 */
export function sessionChangeSet(change: SessionChange): SessionChange {
  const input = optionsObject('The session change', change);
  assertSessionChange(input); // the keys, then the fields (a wrong type is an InvalidInputError)
  // The fields are valid now: no second zod pass. `metadata` and `state` are copied whole, so what is
  // written is what was checked even if the caller changes its objects while the update is in flight.
  const set: Record<string, unknown> = {};
  for (const key of SESSION_CHANGE_FIELDS) {
    const value = input[key];
    if (value !== undefined) set[key] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
  }
  return set as SessionChange;
}

/** Sessions matching the filter, most recently active first (uses the `(tenantId, userId, lastActivityAt)` index); see `Store.listSessions`. */
export async function listSessions(context: MongoContext, filterInput?: SessionFilter): Promise<Session[]> {
  const input = optionsObject('The session filter', filterInput);
  const filter: Filter<SessionDoc> = { ...tenantFilter(input) };
  if (input.userId !== undefined) filter.userId = assertValidId('user', input.userId);
  if (input.status !== undefined) {
    if (input.status !== 'active' && input.status !== 'closed')
      throw new InvalidInputError(`status must be "active" or "closed", not ${JSON.stringify(input.status)}.`);
    filter.status = input.status;
  }
  if (input.activeBefore !== undefined)
    filter.lastActivityAt = { $lt: assertTimestamp('activeBefore', input.activeBefore) };
  const limit = input.limit === undefined ? undefined : assertWholeNumber('limit', input.limit, 0);
  if (limit === 0) return [];
  const cursor = context.collections.sessions.find(filter).sort({ lastActivityAt: -1, order: 1 });
  if (limit !== undefined) cursor.limit(limit);
  return (await cursor.toArray()).map(toSession);
}

/**
 * Deletes the session's episodes, then its messages, branches, checkpoints and pending writes, then
 * the session (the session last, so a retry after a failure finds it and finishes the delete).
 */
export async function deleteSession(context: MongoContext, id: string, scope?: TenantScope): Promise<boolean> {
  const tenant = tenantMatch(scope);
  const found = await context.collections.sessions.findOne(
    { _id: assertSessionId(id), ...tenant },
    { projection: { _id: 1 } },
  );
  if (found === null) return false;
  await context.collections.episodes.deleteMany({ sessionId: id, ...tenant });
  await deleteSessions(context, [id], tenant);
  return true;
}

/**
 * Erases a user of a tenant: their sessions with everything they own (in batches, each delete
 * naming its session ids), then their episodes; counts come from the deletes themselves.
 */
export async function eraseUser(context: MongoContext, input: EraseUserInput): Promise<EraseUserResult> {
  const options = optionsObject('eraseUser input', input);
  const userId = assertValidId('user', options.userId);
  const tenant = tenantMatch(options);
  const docs = await context.collections.sessions.find({ userId, ...tenant }, { projection: { _id: 1 } }).toArray();
  const ids = docs.map((d) => d._id);
  const erased: EraseUserResult = { sessions: 0, branches: 0, messages: 0, checkpoints: 0, episodes: 0, assets: 0 };
  for (let start = 0; start < ids.length; start += DELETE_BATCH) {
    const counts = await deleteSessions(context, ids.slice(start, start + DELETE_BATCH), tenant);
    for (const key of ['sessions', 'branches', 'messages', 'checkpoints'] as const) erased[key] += counts[key];
    erased.assets! += counts.assets;
  }
  erased.episodes = (await context.collections.episodes.deleteMany({ userId, ...tenant })).deletedCount;
  return erased;
}

/** Deletes (or with `dryRun` lists) sessions idle longer than `idleFor` ms, with their documents; see `Store.deleteInactiveSessions`. */
export async function deleteInactiveSessions(
  context: MongoContext,
  options: { idleFor: number; dryRun?: boolean } & TenantScope,
): Promise<string[]> {
  const input = optionsObject('deleteInactiveSessions options', options);
  const idleFor = assertMilliseconds('idleFor', input.idleFor);
  const before = new Date(Date.now() - idleFor).toISOString();
  const docs = await context.collections.sessions
    .find({ lastActivityAt: { $lt: before }, ...tenantFilter(input) }, { projection: { _id: 1 } })
    .sort({ lastActivityAt: -1, order: 1 })
    .toArray();
  const ids = docs.map((d) => d._id);
  if (input.dryRun !== true) {
    const tenant = tenantFilter(input);
    for (let start = 0; start < ids.length; start += DELETE_BATCH)
      await deleteSessions(context, ids.slice(start, start + DELETE_BATCH), tenant);
  }
  return ids;
}

/**
 * Deletes sessions with everything they own; every delete names the session ids (shard-targeted)
 * and the tenant fragment of the call (`{}` for an operator sweep across tenants). Children go
 * first, so a retry finishes a half-done delete; assets, leases and event batches once more after
 * the session document, for an upload that finished in between (see `putAsset`) and a lease or
 * batch written by a call that checked the branch before the delete. Returns what each delete removed.
 */
async function deleteSessions(
  context: MongoContext,
  ids: string[],
  tenant: Filter<SessionDoc>,
): Promise<Omit<EraseUserResult, 'episodes'> & { assets: number }> {
  const { collections } = context;
  const bySession = { sessionId: { $in: ids } };
  const owned = { ...bySession, ...(tenant as { tenantId?: string }) };
  const assets = await deleteSessionAssets(context, ids, tenant);
  const [messages, checkpoints] = await Promise.all([
    collections.messages.deleteMany(owned),
    collections.checkpoints.deleteMany(owned),
    collections.pendingWrites.deleteMany(owned),
    collections.versionClaims.deleteMany(bySession),
    collections.eventLog.deleteMany(owned),
    collections.branchLeases.deleteMany(bySession),
  ]);
  const branches = await collections.branches.deleteMany(owned);
  for (const id of ids) {
    context.branches.forget(id);
    context.tenants.forget(id);
  }
  const sessions = await collections.sessions.deleteMany({ _id: { $in: ids }, ...tenant });
  // Once more after the session documents, as for assets: a lease change or event append that
  // checked the branch before the delete and wrote after the first pass is not left behind.
  const [late] = await Promise.all([
    deleteSessionAssets(context, ids, tenant),
    collections.branchLeases.deleteMany(bySession),
    collections.eventLog.deleteMany(owned),
  ]);
  return {
    sessions: sessions.deletedCount,
    branches: branches.deletedCount,
    messages: messages.deletedCount,
    checkpoints: checkpoints.deletedCount,
    assets: assets + late,
  };
}
