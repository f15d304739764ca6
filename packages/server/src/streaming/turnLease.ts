import { type BranchLease, type BranchLeaseStore, ConcurrencyError, type TenantScope } from '@baton/core';

/** How the server holds a branch's lease while it runs a turn there. */
export interface TurnLeaseOptions {
  /** This process's owner id (default: a random id per app). */
  owner: string;
  /** How long a lease lasts without renewal, in ms; it is renewed every third of it while the turn runs. */
  ttlMs: number;
}

/**
 * The lease of one running turn: taken before the turn calls anything, renewed while it runs,
 * released when it ends. A lease that was lost (it expired and another process took it) stops
 * being renewed; the store's version checks keep that process's late writes out.
 *
 * @example
 * ```ts
 * const lease = await TurnLease.take(store, 'chat-1', 'main', { tenantId: 'acme' }, { owner: 'a', ttlMs: 15_000 });
 * try { await runTheTurn(lease.epoch); } finally { await lease.release(); }
 * ```
 */
export class TurnLease {
  readonly #timer: ReturnType<typeof setInterval>;

  private constructor(
    readonly store: BranchLeaseStore,
    readonly lease: BranchLease,
    readonly scope: TenantScope,
    ttlMs: number,
  ) {
    const { sessionId, branchId, owner, epoch } = lease;
    this.#timer = setInterval(
      () => void store.renewBranchLease(sessionId, branchId, { owner, epoch, ttlMs, ...scope }).catch(() => undefined),
      Math.max(50, ttlMs / 3),
    );
    this.#timer.unref?.();
  }

  /** The epoch this turn's events are positioned in. */
  get epoch(): number {
    return this.lease.epoch;
  }

  /**
   * Takes the branch's lease (`expired`: only one whose owner died).
   * @throws {ConcurrencyError} (409) when another live process holds it, naming the route to follow its turn
   */
  static async take(
    store: BranchLeaseStore,
    sessionId: string,
    branchId: string,
    scope: TenantScope,
    options: TurnLeaseOptions & { expired?: boolean },
  ): Promise<TurnLease> {
    const taken = await store.acquireBranchLease(sessionId, branchId, {
      owner: options.owner,
      ttlMs: options.ttlMs,
      ...(options.expired ? { expired: true } : {}),
      ...scope,
    });
    if (!taken.acquired) throw runningElsewhere(sessionId, branchId);
    return new TurnLease(store, taken.lease, scope, options.ttlMs);
  }

  /** Stops renewing and releases the lease (a failure leaves it to expire). */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    const { sessionId, branchId, owner, epoch } = this.lease;
    await this.store.releaseBranchLease(sessionId, branchId, { owner, epoch, ...this.scope }).catch(() => undefined);
  }
}

/** The 409 of a send to a branch whose turn runs in another process. */
export function runningElsewhere(sessionId: string, branchId: string): ConcurrencyError {
  return new ConcurrencyError(
    `A turn is running on session ${JSON.stringify(sessionId)} branch ${JSON.stringify(branchId)}; follow it with GET /sessions/${sessionId}/events and try again when it has completed.`,
  );
}
