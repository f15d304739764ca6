/**
 * Compare-and-set of a versioned document (a session or a branch) without transactions.
 *
 * On MongoDB one `findOneAndUpdate({ _id, version: expected })` is atomic. FerretDB 1.x evaluates
 * the filter and writes the document in separate steps, so two writers from the same version can
 * both succeed; there the update first inserts a claim `<kind>/<_id>/<version + 1>` into
 * `versionClaims`, and only the writer whose insert wins (a unique `_id` is atomic everywhere) may
 * update. Each update records a digest of its change, so a retry whose first attempt landed (the
 * acknowledgement was lost) returns the updated document instead of a ConcurrencyError.
 *
 * Claims do not accumulate: a claim on version `n` only matters while the document may still be
 * below `n` (a claimant from an older version reads the document after claiming, so once it is at
 * `n` or later, its filter cannot match). So the writer that moves a document to a multiple of
 * {@link CLAIM_SWEEP_EVERY} deletes every claim of that document at or below its new version: at
 * most that many claims per document stay, at the cost of one delete every so many updates.
 */
import { hash } from 'node:crypto';
import type { LastChange } from './mongoCollections.js';
import type { MongoContext } from './mongoContext.js';
import { isDuplicateKeyError } from './mongoErrors.js';

/** A claim older than this whose writer never updated (it crashed) may be taken over, in ms. */
const ABANDONED_CLAIM_MS = 30_000;

/** Every this many versions, the writer that reached the version deletes the document's older claims. */
export const CLAIM_SWEEP_EVERY = 16;

/** A digest of an update's change (SHA-256 of its JSON, 22 base64url characters). */
export function changeDigest(change: unknown): string {
  return hash('sha256', JSON.stringify(change), 'base64url').slice(0, 22);
}

/** Whether a stored document is the result of exactly this update from `expectedVersion` (a retry). */
export function alreadyApplied(doc: { version: number; lastChange?: LastChange }, expectedVersion: number, digest: string): boolean {
  return doc.version === expectedVersion + 1 && doc.lastChange?.version === doc.version && doc.lastChange.digest === digest;
}

/** One compare-and-set: what to update and how to read and report. */
export interface CompareAndSet<TDoc> {
  kind: 'session' | 'branch';
  /** The document's `_id`. */
  key: string;
  sessionId: string;
  branchId?: string;
  expectedVersion: number;
  digest: string;
  /** The conditional update (`findOneAndUpdate` on `{ _id, version: expectedVersion }`); `null` when it did not match. */
  update(): Promise<TDoc | null>;
  /** Reads the document (`null` when missing). */
  read(): Promise<TDoc | null>;
  notFound(): Error;
  stale(current: TDoc): Error;
}

/**
 * Runs a compare-and-set: 1 round trip on MongoDB, 2 with version claims (3 on every
 * {@link CLAIM_SWEEP_EVERY}th version, which sweeps the older claims).
 * @throws what `notFound` or `stale` build
 */
export async function compareAndSet<TDoc extends { version: number; lastChange?: LastChange }>(context: MongoContext, op: CompareAndSet<TDoc>): Promise<TDoc> {
  const claimId = `${op.kind}/${op.key}/${op.expectedVersion + 1}`;
  const claimed = context.versionClaims ? await claim(context, claimId, op) : false;
  const updated = await op.update();
  if (updated !== null) {
    if (context.versionClaims && updated.version % CLAIM_SWEEP_EVERY === 0) await sweepClaims(context, op, updated.version);
    return updated;
  }
  const current = await op.read();
  if (current !== null && alreadyApplied(current, op.expectedVersion, op.digest)) return current;
  // Our update did not happen: free the version for the writer that legitimately reaches it.
  if (claimed) await context.collections.versionClaims.deleteOne({ _id: claimId, sessionId: op.sessionId, digest: op.digest });
  throw current === null ? op.notFound() : op.stale(current);
}

/** Inserts the claim; `true` when this call made it, `false` when an earlier attempt of the same change did. */
async function claim<TDoc extends { version: number; lastChange?: LastChange }>(context: MongoContext, claimId: string, op: CompareAndSet<TDoc>): Promise<boolean> {
  const claims = context.collections.versionClaims;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const doc = {
      _id: claimId,
      sessionId: op.sessionId,
      ...(op.branchId === undefined ? {} : { branchId: op.branchId }),
      target: `${op.kind}/${op.key}`,
      version: op.expectedVersion + 1,
      digest: op.digest,
      at: new Date(),
    };
    try {
      await claims.insertOne(doc);
      return true;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const existing = await claims.findOne({ _id: claimId, sessionId: op.sessionId });
    if (existing === null) continue; // released meanwhile: try again
    if (existing.digest === op.digest) return false;
    const current = await op.read();
    if (current === null) throw op.notFound();
    // A claim whose time is damaged (not a date) has an unknown age: it is treated as abandoned.
    const claimedAt = existing.at instanceof Date ? existing.at.getTime() : Number.NaN;
    const abandoned = current.version === op.expectedVersion && !(Date.now() - claimedAt <= ABANDONED_CLAIM_MS);
    if (!abandoned) throw op.stale(current);
    await claims.deleteOne({ _id: claimId, sessionId: op.sessionId, at: existing.at });
  }
  throw op.stale((await op.read()) ?? ({ version: op.expectedVersion } as TDoc));
}

/**
 * Deletes the document's claims at or below `version`, which it has just reached: none of them can
 * let a writer update any more (see the file comment). A failure is ignored: the update landed, and
 * the next sweep of this document deletes what this one left.
 */
async function sweepClaims(context: MongoContext, op: CompareAndSet<{ version: number }>, version: number): Promise<void> {
  try {
    await context.collections.versionClaims.deleteMany({ sessionId: op.sessionId, target: `${op.kind}/${op.key}`, version: { $lte: version } });
  } catch {
    // Housekeeping only; see above.
  }
}
