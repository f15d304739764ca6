/** MongoStore's branch operations (collection `branches`, `_id` = `<sessionId>/<branchId>`). */
import {
  type Branch,
  type BranchParent,
  BranchParentSchema,
  ConcurrencyError,
  InvalidInputError,
  NotFoundError,
  type State,
  type TenantScope,
  type UpdateOptions,
} from '@baton/core';
import { assertSessionId, branchState, ensureBranchDeletable, SCHEMA_VERSIONS } from '@baton/core/store-kit';
import { assertBranchId, assertWholeNumber, optionsObject } from '../collections/inputGuards.js';
import { branchKey, loadBranches, type MongoContext, toBranch } from '../collections/mongoContext.js';
import { isDuplicateKeyError } from '../collections/mongoErrors.js';
import { changeDigest, compareAndSet } from './compareAndSet.js';
import { countMessages } from './mongoMessages.js';
import { requireTenant, type TenantKey, tenantField } from './sessionTenants.js';

/** Forks by reference: reads the branch list and the parent's length, then inserts the branch. */
export async function forkBranch(
  context: MongoContext,
  sessionId: string,
  input: { branchId: string; parent: BranchParent; state?: State },
  scope?: TenantScope,
): Promise<Branch> {
  assertSessionId(sessionId);
  const fork = optionsObject('forkBranch input', input);
  const branchId = assertBranchId(fork.branchId);
  const parentCheck = BranchParentSchema.safeParse(fork.parent);
  if (!parentCheck.success) {
    throw new InvalidInputError(
      `forkBranch parent must be { branchId, atSeq } with atSeq a whole number >= 0, not ${JSON.stringify(fork.parent)}.`,
    );
  }
  const parent = { branchId: assertBranchId(parentCheck.data.branchId), atSeq: parentCheck.data.atSeq };
  const state = branchState(fork.state ?? {}, 'branch state');
  const tenant = await requireTenant(context, sessionId, scope);
  const branches = await loadBranches(context, sessionId, tenant);
  if (branches.length === 0) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  if (branches.some((b) => b.id === branchId))
    throw new ConcurrencyError(`Branch ${JSON.stringify(branchId)} already exists.`);
  if (!branches.some((b) => b.id === parent.branchId))
    throw new NotFoundError(`Parent branch ${JSON.stringify(parent.branchId)} does not exist.`);
  const parentLength = await countMessages(context, sessionId, parent.branchId, tenant);
  if (parent.atSeq > parentLength) {
    throw new InvalidInputError(
      `Cannot fork at seq ${parent.atSeq}: branch ${JSON.stringify(parent.branchId)} has ${parentLength} messages.`,
    );
  }
  const branch: Branch = { id: branchId, sessionId, parent, createdAt: new Date().toISOString(), state, version: 1 };
  try {
    await context.collections.branches.insertOne({
      schemaVersion: SCHEMA_VERSIONS.branch,
      _id: branchKey(sessionId, branchId),
      ...branch,
      ...tenantField(tenant),
      order: context.newOrder(),
    });
  } catch (error) {
    if (isDuplicateKeyError(error))
      throw new ConcurrencyError(`Branch ${JSON.stringify(branchId)} already exists.`, { cause: error });
    throw error;
  }
  context.branches.add(branch);
  context.branches.setLastSeq(sessionId, branchId, parent.atSeq);
  return branch;
}

/**
 * One read of the branch document (`undefined` when missing, or the session is another tenant's);
 * see `Store.getBranch`. The branch is remembered in the `BranchCache` (its `id` and `parent`
 * never change), so a read of its messages that follows needs no read of the branch list when its
 * ancestors are known (always for `main`).
 */
export async function getBranch(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  scope?: TenantScope,
): Promise<Branch | undefined> {
  const _id = branchKey(assertSessionId(sessionId), assertBranchId(branchId));
  let tenant: TenantKey;
  try {
    tenant = await requireTenant(context, sessionId, scope);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  const doc = await context.collections.branches.findOne({ _id, sessionId, ...tenant });
  if (doc === null) return undefined;
  const branch = toBranch(doc);
  context.branches.add(branch);
  return branch;
}

/** Every branch of the session, `main` included; see `Store.listBranches`. */
export async function listBranches(context: MongoContext, sessionId: string, scope?: TenantScope): Promise<Branch[]> {
  const tenant = await requireTenant(context, assertSessionId(sessionId), scope);
  const branches = await loadBranches(context, sessionId, tenant);
  if (branches.length === 0) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  return branches;
}

/** Compare-and-set of a branch's state (see `compareAndSet`), after a tenant check when a tenant is given. */
export async function updateBranch(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  change: { state: State },
  options: UpdateOptions,
): Promise<Branch> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const { expectedVersion, ...scope } = optionsObject('updateBranch options', options);
  const version = assertWholeNumber('expectedVersion', expectedVersion, 1);
  const state = optionsObject('updateBranch change', change).state;
  if (state === null || typeof state !== 'object' || Array.isArray(state)) {
    throw new InvalidInputError(`updateBranch change must be { state: { … } }, not ${JSON.stringify(change)}.`);
  }
  branchState(state, 'branch state');
  const tenant = await requireTenant(context, sessionId, scope);
  const digest = changeDigest({ state });
  const filter = { _id: branchKey(sessionId, branchId), sessionId, ...tenant };
  const { branches } = context.collections;
  const updated = await compareAndSet(context, {
    kind: 'branch',
    key: filter._id,
    sessionId,
    branchId,
    expectedVersion: version,
    set: { state },
    digest,
    apply: (fields, lastChange) =>
      branches.findOneAndUpdate(
        { ...filter, version },
        { $set: { ...fields, lastChange }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      ),
    read: () => branches.findOne(filter),
    notFound: () =>
      new NotFoundError(`Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`),
    stale: (current) =>
      new ConcurrencyError(
        `Branch ${JSON.stringify(branchId)} is at version ${current.version}, not ${version}, or another writer is updating it. Reload and retry.`,
      ),
  });
  return toBranch(updated);
}

/** Deletes the branch (and, with `recursive`, its forks): their messages, checkpoints and pending writes first, the branch documents last. */
export async function deleteBranch(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  options?: { recursive?: boolean } & TenantScope,
): Promise<void> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const input = optionsObject('deleteBranch options', options);
  const recursive = input.recursive === true;
  const tenant = await requireTenant(context, sessionId, input);
  const branches = await loadBranches(context, sessionId, tenant);
  if (branches.length === 0) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  const doomed = ensureBranchDeletable(branchId, branches, { recursive });
  const { collections } = context;
  const filter = { sessionId, branchId: { $in: doomed }, ...tenant };
  context.branches.forget(sessionId);
  await Promise.all([
    collections.messages.deleteMany(filter),
    collections.checkpoints.deleteMany(filter),
    collections.pendingWrites.deleteMany(filter),
    collections.versionClaims.deleteMany({ sessionId, branchId: { $in: doomed } }),
    // Its lease and event log too: a lease left behind would be listed as expired (a cut turn) forever.
    collections.branchLeases.deleteMany({ sessionId, branchId: { $in: doomed } }),
    collections.eventLog.deleteMany(filter),
  ]);
  await collections.branches.deleteMany({ sessionId, id: { $in: doomed }, ...tenant });
  context.branches.forget(sessionId);
  // Once more after the branch documents: an event batch or lease written by a call that checked the
  // branch before (another process's cache may still know it) is not left behind (see appendEvents).
  await Promise.all([
    collections.eventLog.deleteMany(filter),
    collections.branchLeases.deleteMany({ sessionId, branchId: { $in: doomed } }),
  ]);
}
