import { NotFoundError } from '../errors/callerErrors.js';
import { ConcurrencyError } from '../errors/storeErrors.js';
import { type BranchLease, type BranchLeaseStore, isLiveLease } from './branchLease.js';
import type { TenantScope } from './store.js';

/** How a process holds a branch's lease while it runs a turn there. */
export interface TurnLeaseOptions {
  /** The holder's owner id (a process, or one operation of a worker pool). */
  owner: string;
  /** How long the lease lasts without renewal, in ms; it is renewed every third of it while the turn runs. */
  ttlMs: number;
}

/** The owner and epoch of a lease someone holds: what a caller hands on to the process that runs its turn. */
export interface HeldLease {
  owner: string;
  epoch: number;
}

/**
 * The lease of one running turn on a branch (see {@link BranchLeaseStore}): taken before the turn
 * calls anything, renewed every third of its TTL while the turn runs, released when it ends. A
 * lease whose renewal (or, adopted, whose check) finds it gone (it expired and another process took
 * it) stops being renewed and aborts {@link TurnLease.lost} with a `ConcurrencyError`, so its turn
 * can stop writing; one whose session or branch was deleted aborts it with a `NotFoundError`. The
 * store's version checks keep the late writes of a turn that does not stop out.
 *
 * @example
 * ```ts
 * const lease = await TurnLease.take(store, 'chat-1', 'main', { tenantId: 'acme' }, { owner: 'a', ttlMs: 15_000 });
 * try { await runTheTurn({ signal: lease.lost }); } finally { await lease.release(); }
 * ```
 */
export class TurnLease {
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #lost = new AbortController();

  private constructor(
    readonly store: BranchLeaseStore,
    readonly lease: BranchLease,
    readonly scope: TenantScope,
    ttlMs: number,
    /** Adopted from the caller that took it (see {@link TurnLease.adopt}): renewed and released by that caller. */
    readonly adopted: boolean,
  ) {
    const { sessionId, branchId, owner, epoch } = lease;
    // Adopted: its taker renews it; here it is only checked, so this hold never shortens the taker's TTL.
    // Adopted, a lease read as undefined was deleted with its session or branch (it was live when adopted).
    const stillHeld = adopted
      ? () =>
          store.getBranchLease(sessionId, branchId, scope).then((now) => {
            if (now === undefined) throw deleted(sessionId, branchId);
            return now.held && now.owner === owner && now.epoch === epoch;
          })
      : () => store.renewBranchLease(sessionId, branchId, { owner, epoch, ttlMs, ...scope });
    const stop = (reason: Error) => {
      if (this.#lost.signal.aborted) return;
      clearInterval(this.#timer);
      this.#lost.abort(reason);
    };
    this.#timer = setInterval(
      () => {
        stillHeld().then(
          (held) => {
            if (!held) stop(runningElsewhere(sessionId, branchId, 'took over (it had expired)'));
          },
          (error: unknown) => {
            // The session or branch is gone: nothing to renew any more. Else an unreachable store: tried again.
            if (error instanceof NotFoundError) stop(error);
          },
        );
      },
      Math.max(50, ttlMs / 3),
    );
    this.#timer.unref?.();
  }

  /** The epoch of this hold (it grows by one on every acquisition of the branch). */
  get epoch(): number {
    return this.lease.epoch;
  }

  /**
   * Aborted once a renewal found the lease taken by another holder (with a {@link ConcurrencyError}),
   * or its session or branch deleted (with a {@link NotFoundError}).
   */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /**
   * Takes the branch's lease: free, released or expired (`expired`: only a held one whose owner
   * stopped renewing it, as a reconciler takes over a cut turn).
   * @param options `refusal`: the error thrown when another holder's lease is live (default: a
   *   `ConcurrencyError` naming the branch)
   * @throws {ConcurrencyError} when another live holder has it (or what `refusal` returns)
   */
  static async take(
    store: BranchLeaseStore,
    sessionId: string,
    branchId: string,
    scope: TenantScope,
    options: TurnLeaseOptions & { expired?: boolean; refusal?: (held: BranchLease) => Error },
  ): Promise<TurnLease> {
    const taken = await store.acquireBranchLease(sessionId, branchId, {
      owner: options.owner,
      ttlMs: options.ttlMs,
      ...(options.expired ? { expired: true } : {}),
      ...scope,
    });
    if (!taken.acquired)
      throw options.refusal?.(taken.lease) ?? runningElsewhere(sessionId, branchId, `(${taken.lease.owner}) holds`);
    return new TurnLease(store, taken.lease, scope, options.ttlMs, false);
  }

  /**
   * Works under a lease another party took for this turn and keeps renewing (a server that hands its
   * turn to a worker): checks now and every third of `ttlMs` that `held` still holds the branch
   * ({@link TurnLease.lost} once it does not); {@link TurnLease.release} leaves it to its taker.
   * @returns the hold, or `undefined` when `held` no longer holds the branch live (released, expired or taken over)
   */
  static async adopt(
    store: BranchLeaseStore,
    sessionId: string,
    branchId: string,
    scope: TenantScope,
    held: HeldLease & { ttlMs: number },
  ): Promise<TurnLease | undefined> {
    const lease = await store.getBranchLease(sessionId, branchId, scope);
    if (!isLiveLease(lease) || lease!.owner !== held.owner || lease!.epoch !== held.epoch) return undefined;
    return new TurnLease(store, lease!, scope, held.ttlMs, true);
  }

  /** Stops renewing and releases the lease, unless adopted (a failure leaves it to expire). */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    if (this.adopted) return;
    const { sessionId, branchId, owner, epoch } = this.lease;
    await this.store.releaseBranchLease(sessionId, branchId, { owner, epoch, ...this.scope }).catch(() => undefined);
  }
}

function runningElsewhere(sessionId: string, branchId: string, what: string): ConcurrencyError {
  return new ConcurrencyError(
    `Another process ${what} the lease of session ${JSON.stringify(sessionId)} branch ` +
      `${JSON.stringify(branchId)}, where it runs a turn; try again when that turn has completed.`,
  );
}

function deleted(sessionId: string, branchId: string): NotFoundError {
  return new NotFoundError(
    `Session ${JSON.stringify(sessionId)} or its branch ${JSON.stringify(branchId)} was deleted while a turn ran there.`,
  );
}
