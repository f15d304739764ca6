import type { BranchLeaseStore, EventLogEntry, EventLogStore, TenantScope } from '@baton/core';
import { isLiveLease } from '@baton/core';
import type { LoggedEvent } from './branchLog.js';
import { formatEventId } from './eventId.js';

/** Where a branch's events are read from in the store, and how often. */
export interface StoreTailSource {
  eventLog: EventLogStore;
  leases: BranchLeaseStore | undefined;
  sessionId: string;
  branchId: string;
  scope: TenantScope;
  /** Milliseconds between polls. */
  pollMs: number;
}

/** A store log entry as the event the server sends. */
export function loggedOf(sessionId: string, branchId: string, entry: EventLogEntry): LoggedEvent {
  return { id: formatEventId(sessionId, branchId, entry.position), position: entry.position, event: entry.event };
}

/** Whether a turn runs on the branch in some process (its lease is held and live). */
export async function runsSomewhere(
  source: Pick<StoreTailSource, 'leases' | 'sessionId' | 'branchId' | 'scope'>,
): Promise<boolean> {
  return isLiveLease(await source.leases?.getBranchLease(source.sessionId, source.branchId, source.scope));
}
