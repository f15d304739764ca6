/**
 * Compare-and-set of a versioned document (a session or a branch) without transactions.
 *
 * On MongoDB one `findOneAndUpdate({ _id, version: expected })` is atomic. FerretDB 1.x evaluates
 * the filter and writes the document in separate steps, so two writers from the same version can
 * both succeed; there the update first inserts a claim `<kind>/<_id>/<version + 1>` into
 * `versionClaims`, and only the writer whose insert wins may update. Each update records a digest
 * of its change, so a retry whose first attempt landed (the acknowledgement was lost) returns the
 * updated document instead of a ConcurrencyError.
 *
 * A claim carries its update (the `$set`, as JSON), so a claimant that dies between its claim and
 * its update (a crash, a SIGKILL) blocks nobody for long: a writer that finds a claim older than
 * {@link CLAIM_LEASE_MS} on a document still at the claimed version minus one applies the claimed
 * update itself (completing the dead writer's change, exactly as it would have), then reports its
 * own update as stale, so its caller reloads and retries on top. Completing is safe even when the
 * claimant is alive but slow: both apply the same change from the same version, and the claimant
 * recognises it by its digest and returns success. (On FerretDB, the one case left is a completion
 * whose filter matched before and whose write landed after a third writer's update: that update is
 * then overwritten. It needs a claimant paused longer than the lease racing within one write.)
 * Claims of older versions, which carry no update, are voided after {@link ABANDONED_CLAIM_MS}.
 *
 * Claims do not accumulate: a claim on version `n` only matters while the document may still be
 * below `n` (a claimant from an older version reads the document after claiming, so once it is at
 * `n` or later, its filter cannot match). So the writer that moves a document to a multiple of
 * {@link CLAIM_SWEEP_EVERY} deletes every claim of that document at or below its new version: at
 * most that many claims per document stay, at the cost of one delete every so many updates.
 */
import { hash } from 'node:crypto';
import type { LastChange, VersionClaimDoc } from '../collections/mongoCollections.js';
import type { MongoContext } from '../collections/mongoContext.js';
import { isDuplicateKeyError } from '../collections/mongoErrors.js';

/**
 * A claim older than this (in ms, by the claimant's clock) whose update was not applied is
 * completed by the next writer. Normally an update follows its claim within one round trip.
 */
export const CLAIM_LEASE_MS = 1000;

/** A claim without its update (written by an older version of this store) is voided after this many ms. */
const ABANDONED_CLAIM_MS = 30_000;

/** Every this many versions, the writer that reached the version deletes the document's older claims. */
export const CLAIM_SWEEP_EVERY = 16;

/** A digest of an update's change (SHA-256 of its JSON, 22 base64url characters). */
export function changeDigest(change: unknown): string {
  return hash('sha256', JSON.stringify(change), 'base64url').slice(0, 22);
}

/** Whether a stored document is the result of exactly this update from `expectedVersion` (a retry). */
export function alreadyApplied(
  doc: { version: number; lastChange?: LastChange },
  expectedVersion: number,
  digest: string,
): boolean {
  return (
    doc.version === expectedVersion + 1 && doc.lastChange?.version === doc.version && doc.lastChange.digest === digest
  );
}

/** One compare-and-set: what to update and how to read and report. */
export interface CompareAndSet<TDoc> {
  kind: 'session' | 'branch';
  /** The document's `_id`. */
  key: string;
  sessionId: string;
  branchId?: string;
  expectedVersion: number;
  /** The fields the update sets (JSON data); stored in the claim so another writer can complete it. */
  set: Record<string, unknown>;
  /** `changeDigest` of `set`. */
  digest: string;
  /**
   * The conditional update: `findOneAndUpdate({ _id, version: expectedVersion }, { $set: { ...set,
   * lastChange }, $inc: { version: 1 } })`; `null` when it did not match. Also used to complete
   * another writer's claim, with that claim's `set` and `lastChange`.
   */
  apply(set: Record<string, unknown>, lastChange: LastChange): Promise<TDoc | null>;
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
export async function compareAndSet<TDoc extends { version: number; lastChange?: LastChange }>(
  context: MongoContext,
  op: CompareAndSet<TDoc>,
): Promise<TDoc> {
  const claimId = `${op.kind}/${op.key}/${op.expectedVersion + 1}`;
  const claimed = context.versionClaims ? await claim(context, claimId, op) : false;
  const updated = await op.apply(op.set, { version: op.expectedVersion + 1, digest: op.digest });
  if (updated !== null) {
    if (context.versionClaims && updated.version % CLAIM_SWEEP_EVERY === 0)
      await sweepClaims(context, op, updated.version);
    return updated;
  }
  const current = await op.read();
  if (current !== null && alreadyApplied(current, op.expectedVersion, op.digest)) return current;
  // Our update did not happen: free the version for the writer that legitimately reaches it.
  if (claimed)
    await context.collections.versionClaims.deleteOne({ _id: claimId, sessionId: op.sessionId, digest: op.digest });
  throw current === null ? op.notFound() : op.stale(current);
}

/** Inserts the claim; `true` when this call made it, `false` when an earlier attempt of the same change did. */
async function claim<TDoc extends { version: number; lastChange?: LastChange }>(
  context: MongoContext,
  claimId: string,
  op: CompareAndSet<TDoc>,
): Promise<boolean> {
  const claims = context.collections.versionClaims;
  const version = op.expectedVersion + 1;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const doc: VersionClaimDoc = {
      _id: claimId,
      sessionId: op.sessionId,
      ...(op.branchId === undefined ? {} : { branchId: op.branchId }),
      target: `${op.kind}/${op.key}`,
      version,
      digest: op.digest,
      change: JSON.stringify(op.set),
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
    // A claim whose time is damaged (not a date) has an unknown age: it counts as past its lease.
    const claimedAt = existing.at instanceof Date ? existing.at.getTime() : Number.NaN;
    const expired = (limit: number) => !(Date.now() - claimedAt <= limit);
    if (current.version !== op.expectedVersion) throw op.stale(current);
    const change = parseClaimedChange(existing.change);
    if (change !== undefined && expired(CLAIM_LEASE_MS)) {
      // The claimant did not update within its lease (it died, most likely): apply its update for it.
      const completed = await op.apply(change, { version, digest: existing.digest });
      throw op.stale(completed ?? (await op.read()) ?? current);
    }
    if (change !== undefined || !expired(ABANDONED_CLAIM_MS)) throw op.stale(current);
    await claims.deleteOne({ _id: claimId, sessionId: op.sessionId, at: existing.at });
  }
  throw op.stale((await op.read()) ?? ({ version: op.expectedVersion } as TDoc));
}

/**
 * Deletes the document's claims at or below `version`, which it has just reached: none of them can
 * let a writer update any more (see the file comment). A failure is ignored: the update landed, and
 * the next sweep of this document deletes what this one left.
 */
async function sweepClaims(
  context: MongoContext,
  op: CompareAndSet<{ version: number }>,
  version: number,
): Promise<void> {
  try {
    await context.collections.versionClaims.deleteMany({
      sessionId: op.sessionId,
      target: `${op.kind}/${op.key}`,
      version: { $lte: version },
    });
  } catch {
    // Housekeeping only; see above.
  }
}

/** The update a claim carries, or `undefined` when it carries none or a damaged one (such a claim is voided after its time, like an old one). */
function parseClaimedChange(change: unknown): Record<string, unknown> | undefined {
  if (typeof change !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(change);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
