import { type Branch, NotFoundError } from '@baton/core';
import { parseStoredBranch } from '@baton/core/store-kit';
import type { ObjectId } from 'mongodb';
import type { BranchCache } from '../operations/branchCache.js';
import type { SessionTenants, TenantKey } from '../operations/sessionTenants.js';
import type { BranchDoc, MongoCollections } from './mongoCollections.js';
import { misplacedDocument } from './mongoErrors.js';

/** What every MongoStore operation works with: the collections and the branch cache. */
export interface MongoContext {
  readonly collections: MongoCollections;
  readonly branches: BranchCache;
  /** The tenants of recently used sessions (see `requireTenant`). */
  readonly tenants: SessionTenants;
  /**
   * Whether compare-and-set updates first claim their version with an insert (see
   * `compareAndSet`): needed where a conditional update is not atomic (FerretDB). Set by `init()`.
   */
  versionClaims: boolean;
  /** A new `order` value (insertion order): an ObjectId of the client's own driver. */
  readonly newOrder: () => ObjectId;
}

/**
 * A branch as the API returns it: the document checked as strictly as `forkBranch` checks it,
 * without `_id` and bookkeeping fields.
 * @throws {DocumentCorruptError} when a field fails the rules or disagrees with `_id`
 */
export function toBranch(doc: BranchDoc): Branch {
  const document = `branch document ${JSON.stringify(doc._id)}`;
  const branch = parseStoredBranch(doc, document); // drops _id, tenantId and the bookkeeping fields
  if (doc._id !== branchKey(branch.sessionId, branch.id)) throw misplacedDocument(document, 'id', branch.id);
  return branch;
}

/** The `_id` of a branch document. */
export function branchKey(sessionId: string, branchId: string): string {
  return `${sessionId}/${branchId}`;
}

/**
 * Reads every branch of a session (one query, scoped by the session's tenant) and refreshes the cache.
 * @returns the branches in creation order; empty when the session does not exist
 */
export async function loadBranches(context: MongoContext, sessionId: string, tenant: TenantKey): Promise<Branch[]> {
  const docs = await context.collections.branches
    .find({ sessionId, ...tenant })
    .sort({ order: 1 })
    .toArray();
  const branches = docs.map(toBranch);
  context.branches.replace(sessionId, branches);
  return branches;
}

/**
 * The branch, from the cache or (on a miss) from the database.
 * @throws {NotFoundError} naming the missing session or branch
 */
export async function requireBranch(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  tenant: TenantKey,
): Promise<Branch> {
  const cached = context.branches.get(sessionId, branchId);
  if (cached !== undefined) return cached;
  const branches = await loadBranches(context, sessionId, tenant);
  const found = branches.find((b) => b.id === branchId);
  if (found !== undefined) return found;
  if (branches.length === 0) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  throw new NotFoundError(`Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`);
}

/**
 * A lookup of the session's branches for `branchLineage`: from the cache when every ancestor of
 * `branchId` is there, else after one read of all branches.
 */
export async function branchLookup(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  tenant: TenantKey,
): Promise<(id: string) => Branch | undefined> {
  const cached = context.branches.all(sessionId);
  let id: string | undefined = branchId;
  let complete = cached !== undefined;
  while (complete && id !== undefined) {
    const branch: Branch | undefined = cached?.get(id);
    if (branch === undefined) complete = false;
    id = branch?.parent?.branchId;
  }
  if (complete && cached !== undefined) return (wanted) => cached.get(wanted);
  const loaded = new Map((await loadBranches(context, sessionId, tenant)).map((b) => [b.id, b]));
  return (wanted) => loaded.get(wanted);
}
