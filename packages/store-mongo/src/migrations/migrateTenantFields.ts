/**
 * The one storage migration MongoStore runs itself: documents of messages, branches, checkpoints
 * and pending writes written before `schemaVersion` 2 lack their session's `tenantId`, which every
 * command on them now names; this fills it in from the sessions. Field-level migrations of the
 * documents themselves happen on read, through core's registry (`migrateFields`).
 */
import type { MongoCollections } from '../collections/mongoCollections.js';
import { isDuplicateKeyError } from '../collections/mongoErrors.js';

/** How many sessions one `updateMany` names. */
const BATCH = 500;

/** The marker document in the `meta` collection. */
const MARKER = 'formats';

/** What {@link migrateTenantFields} changed: documents given their session's tenant id, per collection. */
export interface TenantFieldsReport {
  messages: number;
  branches: number;
  checkpoints: number;
  pendingWrites: number;
}

/**
 * Gives every message, branch, checkpoint and pending-write document of a session with a tenant
 * that tenant's id, where the document has none (a document of `schemaVersion` 1). Idempotent:
 * each update matches only documents without `tenantId`. One read of the sessions with a tenant,
 * then one `updateMany` per collection per batch of sessions of the same tenant. Records that it
 * ran in the `meta` collection (`{ _id: 'formats', tenantFields: true }`).
 *
 * @param collections the store's collections
 * @param options `{ force }`: run even when the marker says it already did (after a rolling
 *   upgrade in which an older process kept writing)
 * @returns how many documents were changed, per collection; zeros when the marker was set and `force` was not
 */
export async function migrateTenantFields(
  collections: MongoCollections,
  options: { force?: boolean } = {},
): Promise<TenantFieldsReport> {
  const report: TenantFieldsReport = { messages: 0, branches: 0, checkpoints: 0, pendingWrites: 0 };
  if (options.force !== true && (await collections.meta.findOne({ _id: MARKER }))?.tenantFields === true) return report;
  const byTenant = new Map<string, string[]>();
  const flush = async (tenantId: string, ids: string[]): Promise<void> => {
    const filter = { sessionId: { $in: ids }, tenantId: { $exists: false } };
    const update = { $set: { tenantId } };
    const [messages, branches, checkpoints, pendingWrites] = await Promise.all([
      collections.messages.updateMany(filter, update),
      collections.branches.updateMany(filter, update),
      collections.checkpoints.updateMany(filter, update),
      collections.pendingWrites.updateMany(filter, update),
    ]);
    report.messages += messages.modifiedCount;
    report.branches += branches.modifiedCount;
    report.checkpoints += checkpoints.modifiedCount;
    report.pendingWrites += pendingWrites.modifiedCount;
  };
  for await (const session of collections.sessions.find(
    { tenantId: { $exists: true } },
    { projection: { _id: 1, tenantId: 1 } },
  )) {
    const tenantId = session.tenantId;
    if (typeof tenantId !== 'string') continue;
    const ids = byTenant.get(tenantId) ?? [];
    ids.push(session._id);
    byTenant.set(tenantId, ids);
    if (ids.length >= BATCH) {
      byTenant.delete(tenantId);
      await flush(tenantId, ids);
    }
  }
  for (const [tenantId, ids] of byTenant) await flush(tenantId, ids);
  const mark = () =>
    collections.meta.updateOne({ _id: MARKER }, { $set: { tenantFields: true, at: new Date() } }, { upsert: true });
  try {
    await mark();
  } catch (error) {
    // Two stores opening a new database at once both upsert the marker; the one that loses the
    // insert gets a duplicate key (MongoDB and FerretDB alike), and its retry updates the marker.
    if (!isDuplicateKeyError(error)) throw error;
    await mark();
  }
  return report;
}
