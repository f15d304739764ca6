import { type BranchLeaseStore, type Store, type TenantScope, TurnLease } from '@baton/core';
import type { Info } from '@temporalio/activity';
import type { TurnActivityInput } from './sessionContract.js';

/** How a turn attempt holds its branch: the lease it works under, and whether this operation began before it. */
export interface BranchHold {
  /** The branch's lease (`undefined` when the store has no leases). */
  lease: TurnLease | undefined;
  /**
   * An earlier attempt of this operation held the branch, so what is stored after the workflow's
   * known head is this operation's (finished by the recovery rules, never started again). False on a
   * first attempt, and on a retry of one that never got the lease: the operation starts at the head.
   */
  continuing: boolean;
}

/**
 * Takes the branch's lease for one attempt of a turn activity, by the rules of an in-process turn
 * (`TurnLease`): free, released or expired (a worker killed mid-turn) it is taken, while another
 * holder's lease is live the attempt fails with `ConcurrencyError` (Temporal retries it later). A
 * lease the caller handed on (`input.lease`: `@baton/server` holds the branch while it awaits the
 * Update) is adopted instead: the caller renews and releases it, the attempt checks it still stands.
 *
 * The lease's owner names the operation (`temporal/<workflow id>/<run id>/<activity id>`), so a retry
 * knows an earlier attempt held the branch when it takes the lease straight after that attempt's, or
 * from the attempt's heartbeat (each attempt heartbeats once it holds the lease, before it writes).
 *
 * @throws {ConcurrencyError} when another holder's lease is live
 * @example
 * ```ts
 * const hold = await holdBranch(desk.config.store, input, Context.current().info, 15_000);
 * try { ... } finally { await hold.lease?.release(); }
 * ```
 */
export async function holdBranch(
  store: Store,
  input: TurnActivityInput,
  info: Info,
  ttlMs: number,
): Promise<BranchHold> {
  const retried = info.attempt > 1;
  const leases = leasesOf(store);
  if (leases === undefined) return { lease: undefined, continuing: retried };
  const { sessionId, tenantId } = input.target;
  const branchId = input.target.branch ?? 'main';
  const scope: TenantScope = tenantId === undefined ? {} : { tenantId };
  if (input.lease !== undefined) {
    const adopted = await TurnLease.adopt(leases, sessionId, branchId, scope, { ...input.lease, ttlMs });
    // The caller held the branch all along: nothing but this operation ran there since its head.
    if (adopted !== undefined) return { lease: adopted, continuing: retried };
  }
  const run = info.workflowExecution; // undefined only for a standalone activity, which Baton does not start
  const owner = `temporal/${run?.workflowId ?? sessionId}/${run?.runId ?? '-'}/${info.activityId}`;
  const before = retried ? await leases.getBranchLease(sessionId, branchId, scope) : undefined;
  const lease = await TurnLease.take(leases, sessionId, branchId, scope, { owner, ttlMs });
  const straightAfter = before !== undefined && lease.epoch === before.epoch + 1;
  const heldEarlier = (straightAfter && before.owner === owner) || info.heartbeatDetails !== undefined;
  return { lease, continuing: retried && heldEarlier };
}

/** The store's branch leases, when it has them. */
function leasesOf(store: Store): BranchLeaseStore | undefined {
  return typeof store.acquireBranchLease === 'function' && typeof store.getBranchLease === 'function'
    ? (store as BranchLeaseStore)
    : undefined;
}
