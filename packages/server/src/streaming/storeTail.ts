import type { BranchLeaseStore, EventLogEntry, EventLogStore, TenantScope } from '@baton/core';
import { isLiveLease } from '@baton/core';
import type { LoggedEvent, LogItem } from './branchLog.js';
import { type EventPosition, formatEventId } from './eventId.js';
import type { EventQueue } from './eventQueue.js';

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

/**
 * Follows a branch's event log in the store (FerretDB has no change streams, so by polling every
 * `pollMs`) into `queue`, from after `after`: each poll reads the entries after the last one pushed;
 * when a poll finds nothing new and no process holds the branch's lease, the run ended (`run.ended`
 * is pushed; with `follow` polling goes on for later turns). Stops when the queue's reader leaves.
 *
 * @example
 * ```ts
 * void tailStore({ eventLog: store, leases: store, sessionId: 'chat-1', branchId: 'main', scope: {}, pollMs: 100 }, queue, after, false);
 * ```
 */
export async function tailStore(
  source: StoreTailSource,
  queue: EventQueue<LogItem>,
  after: EventPosition,
  follow: boolean,
): Promise<void> {
  let last = { epoch: after.epoch ?? 0, seq: after.seq, index: after.index };
  let ended = false;
  while (!queue.ended) {
    await new Promise((resolve) => setTimeout(resolve, source.pollMs));
    if (queue.ended) return;
    try {
      // The lease is read before the log: a run that ended before the lease read has all its events in the log read after it.
      const running = await runsSomewhere(source);
      const { entries } = await source.eventLog.readEvents(source.sessionId, source.branchId, {
        after: last,
        ...source.scope,
      });
      for (const entry of entries)
        queue.push({ kind: 'event', logged: loggedOf(source.sessionId, source.branchId, entry) });
      last = entries.at(-1)?.position ?? last;
      if (entries.length > 0) ended = false;
      if (!running && entries.length === 0 && !ended) {
        ended = true;
        queue.push({ kind: 'run.ended' });
        if (!follow) return;
      }
    } catch {
      // A failed poll (the store unreachable for a moment) is retried at the next interval.
    }
  }
}
