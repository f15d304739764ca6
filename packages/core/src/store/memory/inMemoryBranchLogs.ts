/** `InMemoryStore`'s event logs and branch leases, kept in each session's record (deleted with it). */
import type { BranchLease, LeaseAcquisition } from '../branchLease.js';
import { nextLease } from '../branchLease.js';
import { cloneData } from '../cloneData.js';
import {
  checkEventBatch,
  type EventLogEntry,
  type EventLogPage,
  type EventLogPosition,
  type EventLogRetention,
  keptBatches,
  pageOf,
} from '../eventLog.js';
import type { SessionRecord } from './inMemoryRecords.js';

/** `appendEvents` on a found session: one batch, after the log's last entry. */
export function appendRecordEvents(record: SessionRecord, branchId: string, entries: readonly EventLogEntry[]): void {
  record.eventLogs ??= new Map();
  const batches = record.eventLogs.get(branchId) ?? [];
  const last = batches.at(-1)?.entries.at(-1)?.position;
  checkEventBatch(entries, last);
  const first = entries[0]!.position;
  const after: EventLogPosition = last ?? { epoch: first.epoch, seq: first.seq, index: Math.max(0, first.index - 1) };
  batches.push({ after, entries: cloneData([...entries]), createdAt: Date.now() });
  record.eventLogs.set(branchId, batches);
}

/** `readEvents` on a found session. */
export function readRecordEvents(
  record: SessionRecord,
  branchId: string,
  after: EventLogPosition | undefined,
): EventLogPage {
  const page = pageOf(record.eventLogs?.get(branchId) ?? [], after);
  return { entries: cloneData(page.entries), start: page.start };
}

/** `pruneEvents` on a found session. */
export function pruneRecordEvents(record: SessionRecord, branchId: string, retention: EventLogRetention): number {
  const batches = record.eventLogs?.get(branchId);
  if (batches === undefined) return 0;
  const kept = keptBatches(batches, retention, Date.now());
  const dropped = batches.length - kept.length;
  if (dropped === 0) return 0;
  const count = batches.slice(0, dropped).reduce((n, batch) => n + batch.entries.length, 0);
  // The first kept batch starts where the last dropped one ended.
  kept[0] = { ...kept[0]!, after: batches[dropped - 1]!.entries.at(-1)!.position };
  record.eventLogs!.set(branchId, kept);
  return count;
}

/** `acquireBranchLease` on a session's record (or on a lease of a session that no longer exists: `record` undefined). */
export function acquireRecordLease(
  record: SessionRecord,
  branchId: string,
  input: { owner: string; ttlMs: number; expired?: boolean; tenantId?: string },
): LeaseAcquisition {
  record.leases ??= new Map();
  const current = record.leases.get(branchId);
  const next = nextLease(current, record.session.id, branchId, input, Date.now());
  if (next === undefined) return { acquired: false, lease: { ...current! } };
  record.leases.set(branchId, next);
  return { acquired: true, lease: { ...next } };
}

/** Changes the lease if `owner` holds it at `epoch` (`renew`: new expiry; otherwise released). */
export function changeRecordLease(
  record: SessionRecord,
  branchId: string,
  input: { owner: string; epoch: number; ttlMs?: number },
): boolean {
  const current = record.leases?.get(branchId);
  if (current === undefined || !current.held || current.owner !== input.owner || current.epoch !== input.epoch)
    return false;
  const next: BranchLease =
    input.ttlMs === undefined
      ? { ...current, held: false }
      : { ...current, expiresAt: new Date(Date.now() + input.ttlMs).toISOString() };
  record.leases!.set(branchId, next);
  return true;
}

/** `listExpiredLeases` over all sessions: copies of the held leases that expired before `options.before`, at most `limit`. */
export function expiredRecordLeases(
  records: Iterable<SessionRecord>,
  options: { before: string; limit?: number },
): BranchLease[] {
  const expired: BranchLease[] = [];
  for (const record of records) {
    for (const lease of record.leases?.values() ?? [])
      if (lease.held && lease.expiresAt < options.before) expired.push({ ...lease });
  }
  return expired.slice(0, options.limit ?? expired.length);
}
