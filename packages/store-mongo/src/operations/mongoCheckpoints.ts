/**
 * MongoStore's checkpoint operations. A checkpoint is an immutable document (`_id` =
 * `<sessionId>/<branchId>/<id>`); pending writes added later live in `pendingWrites`, one document
 * per tool call, and are merged into the checkpoint on load.
 */
import {
  type Checkpoint,
  CheckpointCorruptError,
  CheckpointInUseError,
  type CheckpointManifestEntry,
  type CheckpointRetention,
  InvalidInputError,
  isIsoTimestamp,
  isValidId,
  NotFoundError,
  type PendingWrite,
  type TenantScope,
} from '@baton/core';
import {
  assertCheckpoint,
  assertPendingWrites,
  assertSessionId,
  checkpointsToPrune,
  parseStoredCheckpoint,
  parseStoredPendingWrite,
} from '@baton/core/store-kit';
import {
  assertBranchId,
  assertCheckpointId,
  assertMilliseconds,
  assertTimestamp,
  assertWholeNumber,
  optionsObject,
  tenantFilter,
  tenantMatch,
} from '../collections/inputGuards.js';
import type { CheckpointDoc, PendingWriteDoc } from '../collections/mongoCollections.js';
import { type MongoContext, requireBranch } from '../collections/mongoContext.js';
import { duplicateKeyIndexes, isDuplicateKeyError } from '../collections/mongoErrors.js';
import { requireTenant, tenantField } from './sessionTenants.js';

/** How many session ids one sweep delete names. */
const SWEEP_BATCH = 500;
const MANIFEST = { _id: 0, id: 1, parentId: 1, step: 1, throughSeq: 1, createdAt: 1, pendingWritesAdded: 1 } as const;

/** The `_id` of a checkpoint document. */
export function checkpointKey(sessionId: string, branchId: string, id: string): string {
  return `${sessionId}/${branchId}/${id}`;
}

/** One `insertOne` (no read when the branch is cached); a duplicate id is a no-op. */
export async function saveCheckpoint(context: MongoContext, input: Checkpoint, scope?: TenantScope): Promise<void> {
  const checkpoint = assertCheckpoint(input);
  const { sessionId, branchId, id } = checkpoint;
  const tenant = await requireTenant(context, sessionId, scope);
  await requireBranch(context, sessionId, branchId, tenant);
  const doc: CheckpointDoc = {
    _id: checkpointKey(sessionId, branchId, id),
    sessionId,
    branchId,
    ...tenantField(tenant),
    id,
    parentId: checkpoint.parentId,
    step: checkpoint.step,
    throughSeq: checkpoint.throughSeq,
    createdAt: checkpoint.createdAt,
    createdDate: dateOf(checkpoint.createdAt),
    order: context.newOrder(),
    body: JSON.stringify(checkpoint),
    pendingWritesAdded: false,
  };
  try {
    await context.collections.checkpoints.insertOne(doc);
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
  }
}

/**
 * Marks the checkpoint as having later pending writes and reads its `createdAt` in one
 * `findOneAndUpdate` (it must exist), then one unordered insert; a tool call already written is
 * skipped. The mark comes first, so a load that finds no mark ran before any of these writes existed.
 */
export async function putPendingWrites(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  checkpointId: string,
  writes: readonly PendingWrite[],
  scope?: TenantScope,
): Promise<void> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  assertCheckpointId(checkpointId);
  if (!Array.isArray(writes))
    throw new InvalidInputError(`putPendingWrites takes an array of pending writes, not ${JSON.stringify(writes)}.`);
  const valid = assertPendingWrites(writes);
  const tenant = await requireTenant(context, sessionId, scope);
  await requireBranch(context, sessionId, branchId, tenant);
  // No projection: FerretDB 1.24 does not implement one on findAndModify (the body is bounded anyway).
  const checkpoint = await context.collections.checkpoints.findOneAndUpdate(
    { sessionId, branchId, ...tenant, id: checkpointId },
    { $set: { pendingWritesAdded: true } },
  );
  if (checkpoint === null)
    throw new NotFoundError(
      `Checkpoint ${JSON.stringify(checkpointId)} of branch ${JSON.stringify(branchId)} does not exist.`,
    );
  if (valid.length === 0) return;
  const docs: PendingWriteDoc[] = valid.map((write) => ({
    _id: JSON.stringify([sessionId, branchId, checkpointId, write.toolCallId]),
    sessionId,
    branchId,
    ...tenantField(tenant),
    checkpointId,
    toolCallId: write.toolCallId,
    write,
    checkpointCreatedAt: checkpoint.createdAt,
    createdDate: dateOf(checkpoint.createdAt),
    order: context.newOrder(),
  }));
  try {
    await context.collections.pendingWrites.insertMany(docs, { ordered: false });
  } catch (error) {
    if (duplicateKeyIndexes(error) === undefined) throw error;
  }
}

/** One read for the checkpoint, and one for its later pending writes when `putPendingWrites` marked it as having some. */
export async function loadCheckpoint(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  id?: string,
  scope?: TenantScope,
): Promise<Checkpoint | undefined> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const wanted = id === undefined ? {} : { id: assertCheckpointId(id) };
  const tenant = await requireTenant(context, sessionId, scope);
  const doc = await context.collections.checkpoints.findOne(
    { sessionId, branchId, ...tenant, ...wanted },
    { sort: { createdAt: -1, order: -1 } },
  );
  if (doc === null) {
    await requireBranch(context, sessionId, branchId, tenant);
    return undefined;
  }
  const document = `checkpoint document ${JSON.stringify(doc._id)}`;
  const checkpoint = parseStoredCheckpoint(doc.body, document);
  if (
    checkpoint.sessionId !== sessionId ||
    checkpoint.branchId !== branchId ||
    checkpoint.id !== doc.id ||
    (id !== undefined && checkpoint.id !== id)
  ) {
    throw new CheckpointCorruptError(
      `The ${document} holds checkpoint ${JSON.stringify(checkpoint.id)} of session ${JSON.stringify(checkpoint.sessionId)}, branch ${JSON.stringify(checkpoint.branchId)}; it was not loaded. Restore it from a backup or delete it.`,
    );
  }
  if (doc.pendingWritesAdded === false) return checkpoint;
  const later = await context.collections.pendingWrites
    .find({ sessionId, branchId, ...tenant, checkpointId: checkpoint.id })
    .sort({ order: 1 })
    .toArray();
  const known = new Set(checkpoint.pendingWrites.map((w) => w.toolCallId));
  for (const doc of later) {
    const write = parseStoredPendingWrite(
      doc.write,
      `pending write document ${JSON.stringify(doc._id)} of checkpoint ${JSON.stringify(checkpoint.id)}`,
    );
    if (known.has(write.toolCallId)) continue;
    known.add(write.toolCallId);
    checkpoint.pendingWrites.push(write);
  }
  return checkpoint;
}

/** The branch's checkpoint manifest, oldest first, read with a projection (no machine snapshots); see `Store.listCheckpoints`. */
export async function listCheckpoints(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  scope?: TenantScope,
): Promise<CheckpointManifestEntry[]> {
  return (await readManifest(context, sessionId, branchId, scope)).entries;
}

/**
 * The manifest (one `find` with a projection), and the ids of the checkpoints that may have later
 * pending writes: marked by `putPendingWrites`, or saved by an older version (no mark at all).
 */
async function readManifest(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  scope?: TenantScope,
): Promise<{ entries: CheckpointManifestEntry[]; withPendingWrites: Set<string> }> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const tenant = await requireTenant(context, sessionId, scope);
  const docs = await context.collections.checkpoints
    .find({ sessionId, branchId, ...tenant }, { projection: MANIFEST })
    .sort({ createdAt: 1, order: 1 })
    .toArray();
  if (docs.length === 0) await requireBranch(context, sessionId, branchId, tenant);
  const entries = docs.map((doc) => manifestEntry(doc, sessionId, branchId));
  const withPendingWrites = new Set(
    entries.filter((_, index) => docs[index]!.pendingWritesAdded !== false).map((entry) => entry.id),
  );
  return { entries, withPendingWrites };
}

/**
 * A manifest entry as read (with a projection) from a checkpoint document, checked with the
 * checkpoint schema's rules for these fields.
 * @throws {CheckpointCorruptError} naming the checkpoint and the field
 */
function manifestEntry(
  entry: Partial<CheckpointManifestEntry>,
  sessionId: string,
  branchId: string,
): CheckpointManifestEntry {
  const { id, parentId, step, throughSeq, createdAt } = entry;
  const broken = !isValidId(id)
    ? 'id'
    : parentId !== null && !isValidId(parentId)
      ? 'parentId'
      : !Number.isSafeInteger(step) || (step as number) < 0
        ? 'step'
        : !Number.isSafeInteger(throughSeq) || (throughSeq as number) < 0
          ? 'throughSeq'
          : !isIsoTimestamp(createdAt)
            ? 'createdAt'
            : undefined;
  if (broken !== undefined) {
    throw new CheckpointCorruptError(
      `A checkpoint document of session ${JSON.stringify(sessionId)}, branch ${JSON.stringify(branchId)} (id ${JSON.stringify(id)}) fails its schema at ${broken}: ${JSON.stringify(entry[broken])}; the manifest was not read. Restore it from a backup or delete it.`,
    );
  }
  return {
    id: id as string,
    parentId: parentId as string | null,
    step: step as number,
    throughSeq: throughSeq as number,
    createdAt: createdAt as string,
  };
}

/** Deletes the branch's checkpoints outside the retention (the newest is kept); see `Store.pruneCheckpoints`. */
export async function pruneCheckpoints(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  retentionInput: CheckpointRetention,
  scope?: TenantScope,
): Promise<number> {
  const input = optionsObject('The checkpoint retention', retentionInput);
  const retention: CheckpointRetention = {};
  if (input.last !== undefined) retention.last = assertWholeNumber('retention.last', input.last, 0);
  if (input.maxAgeMs !== undefined) retention.maxAgeMs = assertMilliseconds('retention.maxAgeMs', input.maxAgeMs);
  const manifest = await readManifest(context, sessionId, branchId, scope);
  const doomed = checkpointsToPrune(manifest.entries, retention);
  if (doomed.length === 0) return 0;
  const { collections } = context;
  const tenant = tenantMatch(scope);
  // Pending writes are deleted only for checkpoints that may have some: a checkpoint without the
  // mark has none (putPendingWrites marks before it inserts), so a prune is usually one delete.
  const withWrites = doomed.filter((id) => manifest.withPendingWrites.has(id));
  const [deleted] = await Promise.all([
    collections.checkpoints.deleteMany({ sessionId, branchId, ...tenant, id: { $in: doomed } }),
    withWrites.length === 0
      ? undefined
      : collections.pendingWrites.deleteMany({ sessionId, branchId, ...tenant, checkpointId: { $in: withWrites } }),
  ]);
  return deleted.deletedCount;
}

/**
 * Deletes one checkpoint and its later pending writes, unless it is the branch's newest (by
 * `createdAt`, then save order, as `loadCheckpoint` picks it); see `Store.deleteCheckpoint`.
 */
export async function deleteCheckpoint(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  id: string,
  scope?: TenantScope,
): Promise<boolean> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  assertCheckpointId(id);
  const tenant = await requireTenant(context, sessionId, scope);
  await requireBranch(context, sessionId, branchId, tenant);
  const { checkpoints, pendingWrites } = context.collections;
  const newest = await checkpoints.findOne(
    { sessionId, branchId, ...tenant },
    { sort: { createdAt: -1, order: -1 }, projection: { _id: 0, id: 1 } },
  );
  if (newest?.id === id) throw new CheckpointInUseError(id, branchId);
  const [deleted] = await Promise.all([
    checkpoints.deleteOne({ sessionId, branchId, ...tenant, id }),
    pendingWrites.deleteMany({ sessionId, branchId, ...tenant, checkpointId: id }),
  ]);
  return deleted.deletedCount > 0;
}

/**
 * Sweeps the (tenant's) sessions in batches; each delete names its batch's session ids, so on a
 * sharded cluster it is routed to the shards that hold them. The newest checkpoint of each branch
 * is kept however old (a paused turn stands there): per batch, one read finds the branches with
 * old checkpoints, one read per such branch finds its newest, and the deletes exclude those.
 */
export async function deleteCheckpointsOlderThan(
  context: MongoContext,
  before: string,
  scope?: TenantScope,
): Promise<number> {
  const bound = assertTimestamp('before', before);
  const { collections } = context;
  const tenant = tenantFilter(scope);
  const sessions = collections.sessions.find({ ...tenant }, { projection: { _id: 1 } });
  let deleted = 0;
  let batch: string[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const sessionId = { $in: batch };
    batch = [];
    const old = await collections.checkpoints
      .find({ sessionId, ...tenant, createdAt: { $lt: bound } }, { projection: { _id: 0, sessionId: 1, branchId: 1 } })
      .toArray();
    if (old.length === 0) return;
    const branches = new Map(old.map((c) => [JSON.stringify([c.sessionId, c.branchId]), c]));
    const newest = await Promise.all(
      [...branches.values()].map((c) =>
        collections.checkpoints.findOne(
          { sessionId: c.sessionId, branchId: c.branchId, ...tenant },
          { sort: { createdAt: -1, order: -1 }, projection: { _id: 1, id: 1 } },
        ),
      ),
    );
    const kept = newest.filter((c) => c !== null);
    const [result] = await Promise.all([
      collections.checkpoints.deleteMany({
        sessionId,
        ...tenant,
        createdAt: { $lt: bound },
        _id: { $nin: kept.map((c) => c._id) },
      }),
      collections.pendingWrites.deleteMany({
        sessionId,
        ...tenant,
        checkpointCreatedAt: { $lt: bound },
        checkpointId: { $nin: kept.map((c) => c.id) },
      }),
    ]);
    deleted += result.deletedCount;
  };
  for await (const session of sessions) {
    batch.push(session._id);
    if (batch.length >= SWEEP_BATCH) await flush();
  }
  await flush();
  return deleted;
}

function dateOf(timestamp: string): Date {
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? new Date() : date;
}
