import type { BatonEvent } from '../conversation/events.js';
import { InvalidInputError } from '../errors.js';
import type { TenantScope } from './store.js';

/**
 * Where an event stands in a branch's event log, ordered as a triple: `epoch`, the branch lease's
 * epoch of the turn run that sent it (it grows every time a turn starts or a cut turn is re-run,
 * see {@link BranchLease}); `seq`, the last message it follows (a `message` event has its own
 * message's seq and `index` 0); `index`, its place among the events after that message.
 */
export interface EventLogPosition {
  epoch: number;
  seq: number;
  index: number;
}

/** One event of a branch's event log, at its position. */
export interface EventLogEntry {
  position: EventLogPosition;
  event: BatonEvent;
}

/** How much of a branch's event log a store keeps: the newest `maxEvents`, none older than `maxAgeMs`. */
export interface EventLogRetention {
  maxEvents?: number;
  maxAgeMs?: number;
}

/** What {@link EventLogStore.readEvents} returns. */
export interface EventLogPage {
  /** The entries after the position asked for, oldest first. */
  entries: EventLogEntry[];
  /**
   * Every entry after this position is kept (older ones were pruned, or came before the log began);
   * `undefined` when the branch has no log.
   */
  start: EventLogPosition | undefined;
}

/**
 * A bounded log of each branch's events (deltas, tool calls, handoffs, requests, messages), so a
 * process that did not run a turn can replay and follow it. Written only by the holder of the
 * branch's lease, in position order, one batch per call (one write, one round trip); read by any
 * process. An optional capability of a `Store`; the three built-in stores have it.
 *
 * @example
 * ```ts
 * await store.appendEvents!('chat-1', 'main', [{ position: { epoch: 3, seq: 4, index: 1 }, event }], { tenantId: 'acme' });
 * const { entries } = await store.readEvents!('chat-1', 'main', { after: { epoch: 3, seq: 4, index: 0 }, tenantId: 'acme' });
 * ```
 */
export interface EventLogStore {
  /**
   * Appends a batch of entries (positions ascending, after every stored one) in one write. An append
   * racing `deleteBranch` or `deleteSession` (in any process) lands before the delete, which removes
   * it, or fails: no log of a deleted branch is left, and a new fork of its id starts with none.
   * @throws {InvalidInputError} for an empty batch or positions out of order
   * @throws {NotFoundError} when the session (of this tenant) or branch does not exist (or was deleted meanwhile)
   */
  appendEvents(
    sessionId: string,
    branchId: string,
    entries: readonly EventLogEntry[],
    scope?: TenantScope,
  ): Promise<void>;
  /**
   * The entries after `after` (all when omitted), oldest first, and where the kept log starts.
   * @throws {NotFoundError} when the session (of this tenant) or branch does not exist
   */
  readEvents(
    sessionId: string,
    branchId: string,
    options?: { after?: EventLogPosition } & TenantScope,
  ): Promise<EventLogPage>;
  /**
   * Drops the oldest entries beyond the retention (whole batches). Returns how many entries were dropped.
   * @throws {NotFoundError} when the session (of this tenant) or branch does not exist
   */
  pruneEvents(sessionId: string, branchId: string, retention: EventLogRetention, scope?: TenantScope): Promise<number>;
}

/**
 * Orders two log positions: negative when `a` comes first, 0 when equal, positive when after.
 * @example
 * ```ts
 * compareLogPositions({ epoch: 2, seq: 9, index: 0 }, { epoch: 1, seq: 12, index: 3 }); // > 0: a re-run comes after the cut run
 * ```
 */
export function compareLogPositions(a: EventLogPosition, b: EventLogPosition): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.seq !== b.seq ? a.seq - b.seq : a.index - b.index;
}

/**
 * A position as a string that sorts as the position does (for stores that index it), e.g. `'000000000003.000000000004.000000000001'`.
 * @example
 * ```ts
 * eventLogKey({ epoch: 3, seq: 4, index: 1 }) < eventLogKey({ epoch: 3, seq: 10, index: 0 }); // true
 * ```
 */
export function eventLogKey(position: EventLogPosition): string {
  const pad = (n: number) => String(n).padStart(12, '0');
  return `${pad(position.epoch)}.${pad(position.seq)}.${pad(position.index)}`;
}

/** One stored batch of a branch's event log (what the built-in stores keep per `appendEvents` call). */
export interface EventLogBatch {
  /** The position before the batch's first entry (the previous batch's last, or the run's start). */
  after: EventLogPosition;
  entries: EventLogEntry[];
  /** When it was appended (ms since the epoch). */
  createdAt: number;
}

/**
 * Checks a batch about to be appended after `last` (the log's last position, if any).
 * @throws {InvalidInputError} for an empty batch or positions not ascending after `last`
 */
export function checkEventBatch(entries: readonly EventLogEntry[], last: EventLogPosition | undefined): void {
  if (entries.length === 0) throw new InvalidInputError('appendEvents needs at least one entry.');
  let previous = last;
  for (const entry of entries) {
    if (previous !== undefined && compareLogPositions(entry.position, previous) <= 0) {
      throw new InvalidInputError(
        `Event log positions must ascend: ${JSON.stringify(entry.position)} does not come after ${JSON.stringify(previous)}.`,
      );
    }
    previous = entry.position;
  }
}

/** The batches to keep under `retention` (whole batches, the newest always kept), for the built-in stores. */
export function keptBatches<B extends { entries: { length: number }; createdAt: number }>(
  batches: readonly B[],
  retention: EventLogRetention,
  now: number,
): B[] {
  const kept: B[] = [];
  let count = 0;
  for (let i = batches.length - 1; i >= 0; i--) {
    const batch = batches[i]!;
    const tooMany = retention.maxEvents !== undefined && count + batch.entries.length > retention.maxEvents;
    const tooOld = retention.maxAgeMs !== undefined && now - batch.createdAt > retention.maxAgeMs;
    if (kept.length > 0 && (tooMany || tooOld)) break;
    count += batch.entries.length;
    kept.unshift(batch);
  }
  return kept;
}

/** A page of `batches` after `after` (for the built-in stores). */
export function pageOf(batches: readonly EventLogBatch[], after: EventLogPosition | undefined): EventLogPage {
  const entries: EventLogEntry[] = [];
  for (const batch of batches) {
    for (const entry of batch.entries)
      if (after === undefined || compareLogPositions(entry.position, after) > 0) entries.push(entry);
  }
  return { entries, start: batches[0]?.after };
}
