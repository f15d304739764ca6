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
  /**
   * How long after a cut run's lease expired (held, not released: its process died) a follower
   * still waits for another process to take the branch over, in ms (0: a cut run has ended).
   */
  cutTurnWaitMs?: number;
}

/** A store log entry as the event the server sends. */
export function loggedOf(sessionId: string, branchId: string, entry: EventLogEntry): LoggedEvent {
  return { id: formatEventId(sessionId, branchId, entry.position), position: entry.position, event: entry.event };
}

/**
 * Whether a turn runs on the branch in some process (its lease is held and live), or was cut there
 * less than `cutTurnWaitMs` ago (its lease expired while held), so that a takeover is still to come.
 */
export async function runsSomewhere(
  source: Pick<StoreTailSource, 'leases' | 'sessionId' | 'branchId' | 'scope' | 'cutTurnWaitMs'>,
): Promise<boolean> {
  const lease = await source.leases?.getBranchLease(source.sessionId, source.branchId, source.scope);
  if (isLiveLease(lease)) return true;
  const wait = source.cutTurnWaitMs ?? 0;
  return lease?.held === true && wait > 0 && Date.parse(lease.expiresAt) + wait > Date.now();
}
