/**
 * `MongoStore`'s event logs and branch leases. An event batch is one document of `eventLog` (one
 * insert per `appendEvents`; `last` is the batch's last position as a sortable key, so a poll is one
 * indexed query); a lease is one document of `branchLeases`, `_id` = `<sessionId>/<branchId>`.
 * A lease changes owner only after its next epoch is claimed by an insert into `versionClaims`
 * (a unique `_id`, atomic on every server, FerretDB included), so of several processes racing for
 * a free or expired lease exactly one wins, even where a conditional update is not atomic.
 */
import {
  type BranchLease,
  type EventLogBatch,
  type EventLogEntry,
  type EventLogPage,
  type EventLogPosition,
  type EventLogRetention,
  type LeaseAcquisition,
  NotFoundError,
  type TenantScope,
} from '@baton/core';
import { assertSessionId, checkEventBatch, eventLogKey, keptBatches, nextLease, pageOf } from '@baton/core/store-kit';
import { assertBranchId, tenantMatch } from '../collections/inputGuards.js';
import type { BranchLeaseDoc, EventBatchDoc } from '../collections/mongoCollections.js';
import { branchKey, type MongoContext, requireBranch } from '../collections/mongoContext.js';
import { isDuplicateKeyError } from '../collections/mongoErrors.js';
import { requireTenant, type TenantKey, tenantField } from './sessionTenants.js';

async function branchTenant(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): Promise<TenantKey> {
  const tenant = await requireTenant(context, sessionId, scope);
  await requireBranch(context, sessionId, branchId, tenant);
  return tenant;
}

/**
 * `MongoStore.appendEvents`: one insert, then one read of the branch (the log's last position is read
 * only when this process has not written the branch yet).
 * @throws {NotFoundError} when the session (of this tenant) or branch does not exist, also when a
 *   delete removed it while the batch was being inserted (the batch is removed: no log of a deleted branch)
 */
export async function appendEvents(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  entries: readonly EventLogEntry[],
  scope: TenantScope,
  lastKnown: Map<string, EventLogPosition>,
): Promise<void> {
  const tenant = await branchTenant(context, sessionId, branchId, scope);
  const key = branchKey(sessionId, branchId);
  let last = lastKnown.get(key);
  if (last === undefined) {
    const newest = await context.collections.eventLog
      .find({ sessionId, branchId, ...tenant }, { projection: { last: 1 } })
      .sort({ last: -1 })
      .limit(1)
      .toArray();
    last = newest[0] === undefined ? undefined : lastPosition(newest[0]);
  }
  checkEventBatch(entries, last);
  const first = entries[0]!.position;
  const after = last ?? { epoch: first.epoch, seq: first.seq, index: Math.max(0, first.index - 1) };
  const end = entries.at(-1)!.position;
  const _id = `${key}/${eventLogKey(end)}`;
  await context.collections.eventLog.insertOne({
    _id,
    sessionId,
    branchId,
    ...tenantField(tenant),
    last: eventLogKey(end),
    after,
    // As JSON text: an event's data (tool arguments, state) may hold keys MongoDB reads as operators.
    body: JSON.stringify(entries),
    count: entries.length,
    createdAt: Date.now(),
    createdDate: new Date(),
  });
  // The branch read again after the insert, from the database (the cache may hold a branch another
  // process deleted). A delete removes the branch's batches once more after its branch document, so
  // a batch inserted while the branch was there goes with it, and one inserted after is taken back.
  const branch = await context.collections.branches.findOne({ _id: key, ...tenant }, { projection: { _id: 1 } });
  if (branch === null) {
    await context.collections.eventLog.deleteOne({ _id });
    lastKnown.delete(key);
    context.branches.forget(sessionId);
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist (it was deleted).`,
    );
  }
  lastKnown.set(key, end);
}

const toBatch = (doc: EventBatchDoc): EventLogBatch => ({
  after: doc.after,
  entries: JSON.parse(doc.body) as EventLogEntry[],
  createdAt: doc.createdAt,
});

/** `MongoStore.readEvents`: one query for the batches after the position, one for where the log starts. */
export async function readEvents(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  after: EventLogPosition | undefined,
  scope: TenantScope,
): Promise<EventLogPage> {
  const tenant = await branchTenant(context, sessionId, branchId, scope);
  const filter = { sessionId, branchId, ...tenant };
  const [docs, first] = await Promise.all([
    context.collections.eventLog
      .find(after === undefined ? filter : { ...filter, last: { $gt: eventLogKey(after) } })
      .sort({ last: 1 })
      .toArray(),
    context.collections.eventLog
      .find(filter, { projection: { after: 1 } })
      .sort({ last: 1 })
      .limit(1)
      .toArray(),
  ]);
  return { entries: pageOf(docs.map(toBatch), after).entries, start: first[0]?.after };
}

/** `MongoStore.pruneEvents`: reads the batches' sizes and ages, deletes the dropped ones, moves `after` of the first kept. */
export async function pruneEvents(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  retention: EventLogRetention,
  scope: TenantScope,
): Promise<number> {
  const tenant = await branchTenant(context, sessionId, branchId, scope);
  const docs = await context.collections.eventLog
    .find({ sessionId, branchId, ...tenant }, { projection: { body: 0 } })
    .sort({ last: 1 })
    .toArray();
  const sized = docs.map((doc) => ({ doc, entries: { length: doc.count }, createdAt: doc.createdAt }));
  const kept = keptBatches(sized, retention, Date.now());
  const dropped = docs.slice(0, docs.length - kept.length);
  if (dropped.length === 0) return 0;
  const newStart = lastPosition(dropped.at(-1)!);
  await context.collections.eventLog.updateOne({ _id: kept[0]!.doc._id }, { $set: { after: newStart } });
  await context.collections.eventLog.deleteMany({ _id: { $in: dropped.map((doc) => doc._id) } });
  return dropped.reduce((n, doc) => n + doc.count, 0);
}

function lastPosition(doc: Pick<EventBatchDoc, 'last'>): EventLogPosition {
  const [epoch, seq, index] = doc.last.split('.').map(Number);
  return { epoch: epoch!, seq: seq!, index: index! };
}

const toLease = (doc: BranchLeaseDoc): BranchLease => {
  const { _id, ...lease } = doc;
  return lease;
};

/** `MongoStore.acquireBranchLease`: read, claim the next epoch (insert), write the lease. */
export async function acquireLease(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
): Promise<LeaseAcquisition> {
  const scope = input.tenantId === undefined ? {} : { tenantId: input.tenantId };
  await branchTenant(context, sessionId, branchId, scope);
  const _id = branchKey(sessionId, branchId);
  const currentDoc = await context.collections.branchLeases.findOne({ _id });
  const current = currentDoc === null ? undefined : toLease(currentDoc);
  const next = nextLease(current, sessionId, branchId, { ...input, ...scope }, Date.now());
  if (next === undefined) return { acquired: false, lease: current! };
  try {
    await context.collections.versionClaims.insertOne({
      _id: `lease/${_id}/${next.epoch}`,
      sessionId,
      branchId,
      target: `lease/${_id}`,
      version: next.epoch,
      digest: input.owner,
      at: new Date(),
    });
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const winner = await context.collections.branchLeases.findOne({ _id });
    return { acquired: false, lease: winner === null ? current! : toLease(winner) };
  }
  await context.collections.branchLeases.replaceOne({ _id }, next, { upsert: true });
  if (next.epoch % 16 === 0)
    await context.collections.versionClaims.deleteMany({ target: `lease/${_id}`, version: { $lt: next.epoch } });
  return { acquired: true, lease: next };
}

/**
 * `MongoStore.renewBranchLease` (with `ttlMs`) and `releaseBranchLease` (without): one update filtered
 * on owner, epoch and tenant, after the branch is checked (from the cache when it knows it).
 * @throws {NotFoundError} when the session (of this tenant) or branch does not exist; a lease of it a
 *   delete left behind (a lease change that checked the branch before the delete wrote it after, no
 *   transactions) is removed first, so `listExpiredLeases` lists it no more
 */
export async function changeHeldLease(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  input: { owner: string; epoch: number; ttlMs?: number } & TenantScope,
): Promise<boolean> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const scope = input.tenantId === undefined ? {} : { tenantId: input.tenantId };
  const held = { _id: branchKey(sessionId, branchId), owner: input.owner, epoch: input.epoch, held: true };
  let tenant: TenantKey;
  try {
    tenant = await branchTenant(context, sessionId, branchId, scope);
  } catch (error) {
    // Only this owner's lease at this epoch, of the caller's tenant: never a lease of a live branch.
    if (error instanceof NotFoundError)
      await context.collections.branchLeases.deleteOne({ ...held, ...tenantMatch(scope) });
    throw error;
  }
  const change =
    input.ttlMs === undefined ? { held: false } : { expiresAt: new Date(Date.now() + input.ttlMs).toISOString() };
  const result = await context.collections.branchLeases.updateOne({ ...held, ...tenant }, { $set: change });
  if (result.matchedCount === 1) return true;
  // Lost, or gone with a branch this process's cache still knows (another process deleted it): read again.
  context.branches.forget(sessionId);
  context.tenants.forget(sessionId);
  await branchTenant(context, sessionId, branchId, scope);
  return false;
}

/** `MongoStore.getBranchLease`: `undefined` when the session (of this tenant) or branch does not exist. */
export async function getLease(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): Promise<BranchLease | undefined> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  let tenant: TenantKey;
  try {
    tenant = await branchTenant(context, sessionId, branchId, scope);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  const doc = await context.collections.branchLeases.findOne({ _id: branchKey(sessionId, branchId), ...tenant });
  return doc === null ? undefined : toLease(doc);
}

/** `MongoStore.listExpiredLeases`: one indexed query. */
export async function listExpiredLeases(context: MongoContext, before: string, limit: number): Promise<BranchLease[]> {
  const docs = await context.collections.branchLeases
    .find({ held: true, expiresAt: { $lt: before } })
    .limit(limit)
    .toArray();
  return docs.map(toLease);
}
