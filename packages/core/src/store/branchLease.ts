import type { TenantScope } from './store.js';

/**
 * Who runs a turn on a branch, across processes: the owner's id, until when (renewed while the turn
 * runs), and the `epoch`, which grows by one on every acquisition, so a cut turn re-run by another
 * process sends events at new positions (see `EventLogPosition`). `held` is false once released.
 */
export interface BranchLease {
  sessionId: string;
  branchId: string;
  tenantId?: string;
  owner: string;
  epoch: number;
  held: boolean;
  /** ISO-8601: past it the lease is expired and another process may take it. */
  expiresAt: string;
}

/** What {@link BranchLeaseStore.acquireBranchLease} returns: the lease taken, or the live one held by another owner. */
export type LeaseAcquisition = { acquired: true; lease: BranchLease } | { acquired: false; lease: BranchLease };

/**
 * Leases on branches, so one process at a time runs a turn there. Every change is a compare-and-set
 * on the stored lease (one atomic update), so two processes racing for a free or expired lease get
 * one winner. An optional capability of a `Store`; the three built-in stores have it. Changes
 * (`acquire`, `renew`, `release`) throw `NotFoundError` for a missing session (of the caller's
 * tenant) or branch; `renew` and `release` return `false` for a lease lost; `getBranchLease` reads
 * a missing one as `undefined`. Deleting a branch or session deletes its lease.
 *
 * @example
 * ```ts
 * const taken = await store.acquireBranchLease!('chat-1', 'main', { owner: 'replica-a', ttlMs: 15_000 });
 * if (!taken.acquired) throw new ConcurrencyError(`running on ${taken.lease.owner}`);
 * await store.renewBranchLease!('chat-1', 'main', { owner: 'replica-a', epoch: taken.lease.epoch, ttlMs: 15_000 });
 * await store.releaseBranchLease!('chat-1', 'main', { owner: 'replica-a', epoch: taken.lease.epoch });
 * ```
 */
export interface BranchLeaseStore {
  /**
   * Takes the branch's lease for `owner` for `ttlMs` when nobody holds it, or its holder's time ran
   * out (`expired`: only a lease that is held and expired, as the reconciler takes over a cut turn).
   * The epoch grows by one.
   * @throws {NotFoundError} when the session (of this tenant) or branch does not exist
   */
  acquireBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
  ): Promise<LeaseAcquisition>;
  /**
   * Extends the lease by `ttlMs` from now if `owner` still holds it at `epoch`.
   * @returns whether it did: `false` when the lease is lost (released, expired and taken over, never
   *   taken) while its session and branch exist
   * @throws {NotFoundError} when the session (of this tenant) or branch does not exist (never created
   *   or deleted), as {@link BranchLeaseStore.acquireBranchLease}: a gone session is not a lost lease.
   *   A lease of it a delete left behind (a store without transactions) is removed, so
   *   `listExpiredLeases` stops listing it.
   * @throws {InvalidIdError} for an unsafe session or branch id
   */
  renewBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number; ttlMs: number } & TenantScope,
  ): Promise<boolean>;
  /**
   * Releases the lease if `owner` holds it at `epoch` (the turn ended).
   * @returns whether it did (`false` for a lease lost, as {@link BranchLeaseStore.renewBranchLease})
   * @throws {NotFoundError} when the session (of this tenant) or branch does not exist, as `renewBranchLease`
   *   (a reconciler releasing the lease of a deleted session removes it, and catches this)
   */
  releaseBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number } & TenantScope,
  ): Promise<boolean>;
  /**
   * The branch's lease (held, expired or released), or `undefined` when it never had one — and, like
   * `getBranch`, when the session (of this tenant) or the branch does not exist (or was deleted with
   * its lease), so a caller checking "does a turn run there?" needs no `NotFoundError` handling.
   * @throws {InvalidIdError} for an unsafe session or branch id
   */
  getBranchLease(sessionId: string, branchId: string, scope?: TenantScope): Promise<BranchLease | undefined>;
  /** Leases still held whose `expiresAt` is before `before` (ISO-8601): turns whose owner died. Spans every tenant (an operator call). */
  listExpiredLeases(options: { before: string; limit?: number }): Promise<BranchLease[]>;
}

/** Whether a lease is held and not expired at `now` (ms since the epoch). */
export function isLiveLease(lease: BranchLease | undefined, now: number = Date.now()): boolean {
  return lease?.held === true && Date.parse(lease.expiresAt) > now;
}

/**
 * The lease `owner` gets from `current` (for the built-in stores), or `undefined` when it may not
 * take it: held by anyone and live (or, with `expired`, not held-and-expired).
 */
export function nextLease(
  current: BranchLease | undefined,
  sessionId: string,
  branchId: string,
  input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
  now: number,
): BranchLease | undefined {
  if (input.expired === true ? !(current?.held === true && !isLiveLease(current, now)) : isLiveLease(current, now))
    return undefined;
  return {
    sessionId,
    branchId,
    ...(input.tenantId === undefined ? {} : { tenantId: input.tenantId }),
    owner: input.owner,
    epoch: (current?.epoch ?? 0) + 1,
    held: true,
    expiresAt: new Date(now + input.ttlMs).toISOString(),
  };
}
