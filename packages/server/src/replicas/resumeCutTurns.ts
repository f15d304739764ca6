import { ConcurrencyError, ConfigurationError, NotFoundError, type Store } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import { leasesOf, scopeOfKey, TurnRuns } from '../streaming/turnRuns.js';

/** Options of {@link resumeCutTurns}. */
export interface ResumeCutTurnsOptions {
  /** The workflow whose sessions are resumed. */
  workflow: HandoffWorkflow;
  /** The store whose leases are read (default: the workflow's). It must have branch leases. */
  store?: Store;
  /** Only leases expired at least this many ms ago (default 0: every expired lease). */
  olderThan?: number;
  /** Runs the resumed turns (its lease owner, event log and lease TTL); default: a new `TurnRuns` over the store. */
  runs?: TurnRuns;
  /** At most this many branches per call (default 100). */
  limit?: number;
}

/** What {@link resumeCutTurns} did with one cut turn. */
export interface ResumedTurn {
  sessionId: string;
  branchId: string;
  tenantId?: string;
  /**
   * `resumed`: this call finished it; `nothing`: nothing was left to run (the lease is released);
   * `taken`: another process took it first; `gone`: the session or branch no longer exists (its lease,
   * left by a delete that raced a lease change, is released so that it is not listed again).
   */
  outcome: 'resumed' | 'nothing' | 'taken' | 'gone' | 'failed';
  error?: string;
}

/**
 * Finishes turns whose process died: every branch whose lease is still held but expired (the owner
 * stopped renewing it) is taken over, with a compare-and-set on the expired lease, so of several
 * replicas reconciling at once exactly one resumes each branch; it then runs `session.resume()`
 * (the recovery rules: finished tool results are not run again, the interrupted step runs from its
 * checkpoint), writes the resumed turn's events to the store's event log under a new epoch, and
 * releases the lease. A branch with nothing to resume only has its lease released, and so does a lease
 * whose session or branch was deleted meanwhile (`gone`).
 *
 * @returns one entry per expired lease found
 * @throws {ConfigurationError} when the store has no branch leases
 * @example
 * ```ts
 * const done = await resumeCutTurns({ workflow: desk, olderThan: 5_000 });
 * // [{ sessionId: 'chat-1', branchId: 'main', outcome: 'resumed' }]
 * ```
 */
export async function resumeCutTurns(options: ResumeCutTurnsOptions): Promise<ResumedTurn[]> {
  const { workflow } = options;
  const store = options.store ?? workflow.config.store;
  const leases = leasesOf(store);
  if (leases === undefined)
    throw new ConfigurationError(`resumeCutTurns needs a store with branch leases; the ${store.kind} store has none.`);
  const runs = options.runs ?? new TurnRuns({}, store);
  const before = new Date(Date.now() - (options.olderThan ?? 0)).toISOString();
  const expired = await leases.listExpiredLeases({ before, limit: options.limit ?? 100 });
  const results: ResumedTurn[] = [];
  for (const lease of expired) {
    const tenantKey = lease.tenantId ?? '';
    const base = {
      sessionId: lease.sessionId,
      branchId: lease.branchId,
      ...(lease.tenantId === undefined ? {} : { tenantId: lease.tenantId }),
    };
    try {
      const session = await workflow
        .session({ id: lease.sessionId, branch: lease.branchId, create: false, ...scopeOfKey(tenantKey) })
        .catch((error: unknown) => (error instanceof NotFoundError ? undefined : Promise.reject(error)));
      if (session === undefined) {
        const { owner, epoch } = lease;
        // A store that keeps leases with their session has none left to release (NotFoundError).
        await leases
          .releaseBranchLease(lease.sessionId, lease.branchId, { owner, epoch, ...scopeOfKey(tenantKey) })
          .catch((error: unknown) => (error instanceof NotFoundError ? false : Promise.reject(error)));
        results.push({ ...base, outcome: 'gone' });
        continue;
      }
      const headSeq = session.messages.at(-1)?.seq ?? 0;
      const started = await runs.start(tenantKey, lease.sessionId, lease.branchId, headSeq, () => session.resume(), {
        expired: true,
      });
      started.queue.close();
      const result = await started.stream.then(
        () => 'ran' as const,
        () => 'ran' as const,
      );
      await started.ended;
      results.push({
        ...base,
        outcome:
          result === 'ran' && session.messages.length > 0 && (session.messages.at(-1)?.seq ?? 0) > headSeq
            ? 'resumed'
            : 'nothing',
      });
    } catch (error) {
      if (error instanceof ConcurrencyError) results.push({ ...base, outcome: 'taken' });
      else results.push({ ...base, outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
    }
  }
  return results;
}

/**
 * Runs {@link resumeCutTurns} now and then every `intervalMs` (the timer does not keep the process
 * alive); returns a function that stops it.
 * @example
 * ```ts
 * const stop = reconcileEvery({ workflow: desk, runs }, 5_000);
 * ```
 */
export function reconcileEvery(options: ResumeCutTurnsOptions, intervalMs: number): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      await resumeCutTurns(options);
    } catch (error) {
      console.error('[baton/server] resumeCutTurns failed:', error);
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
