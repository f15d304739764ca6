import type { Branch } from '@baton/core';
import { LRUCache } from 'lru-cache';

/**
 * The branches of recently used sessions, in process memory, so that an append or a checkpoint
 * save needs no read to know its branch exists, and a read needs none to follow a fork's parent.
 * Only `id` and `parent` of a cached branch are used: they never change after a fork. A session's
 * entry is dropped when this store deletes the session or one of its branches; a delete made by
 * another process is not seen (MongoDB has no cheap way to tell), see the README.
 *
 * Bounded: past `capacity` sessions the least recently used is forgotten (an `lru-cache` LRU).
 */
export class BranchCache {
  /** `undefined` when the capacity is 0 (off). */
  readonly #sessions: LRUCache<string, Map<string, Branch>> | undefined;
  /** The last seq of a branch's own messages, when this store knows it (`<sessionId>/<branchId>` → seq). */
  readonly #lastSeqs = new Map<string, number>();

  /** @param capacity how many sessions to remember; 0 turns the cache off */
  constructor(readonly capacity: number) {
    this.#sessions =
      capacity === 0
        ? undefined
        : new LRUCache({
            max: capacity,
            // A session evicted or deleted takes its branches' last seqs with it (not on `set`: `replace` keeps them).
            dispose: (branches, sessionId, reason) => {
              if (reason === 'evict' || reason === 'delete') this.#dropLastSeqs(sessionId, branches);
            },
          });
  }

  /** The cached branch, or `undefined` when this session's branches were not loaded or it is unknown. */
  get(sessionId: string, branchId: string): Branch | undefined {
    return this.#sessions?.get(sessionId)?.get(branchId);
  }

  /** Every cached branch of the session (complete only after {@link replace}), or `undefined`. */
  all(sessionId: string): Map<string, Branch> | undefined {
    return this.#sessions?.peek(sessionId);
  }

  /**
   * The last seq of the branch's own messages as this store last saw it (`undefined`: unknown). Another
   * process may have appended since: callers treat it as a hint and re-read on a surprise.
   */
  lastSeq(sessionId: string, branchId: string): number | undefined {
    return this.#sessions?.has(sessionId) ? this.#lastSeqs.get(`${sessionId}/${branchId}`) : undefined;
  }

  /** Records the branch's last own seq (after an append or a read of it). */
  setLastSeq(sessionId: string, branchId: string, seq: number): void {
    if (this.#sessions?.peek(sessionId)?.has(branchId)) this.#lastSeqs.set(`${sessionId}/${branchId}`, seq);
  }

  /** Forgets the branch's last seq (after a lost race: it is read again on the next append). */
  dropLastSeq(sessionId: string, branchId: string): void {
    this.#lastSeqs.delete(`${sessionId}/${branchId}`);
  }

  /** Records the full branch list of a session, as just read from the database. */
  replace(sessionId: string, branches: readonly Branch[]): void {
    if (this.#sessions === undefined) return;
    const kept = new Set(branches.map((b) => b.id));
    for (const branchId of this.#sessions.peek(sessionId)?.keys() ?? []) {
      if (!kept.has(branchId)) this.#lastSeqs.delete(`${sessionId}/${branchId}`);
    }
    this.#sessions.set(sessionId, new Map(branches.map((b) => [b.id, b])));
  }

  /** Adds one branch to a session's cached list (after a create or a fork this store made). */
  add(branch: Branch): void {
    const branches = this.#sessions?.peek(branch.sessionId);
    if (branches === undefined) this.replace(branch.sessionId, [branch]);
    else branches.set(branch.id, branch);
  }

  /** Forgets a session (after a delete). */
  forget(sessionId: string): void {
    this.#sessions?.delete(sessionId);
  }

  #dropLastSeqs(sessionId: string, branches: Map<string, Branch>): void {
    for (const branchId of branches.keys()) this.#lastSeqs.delete(`${sessionId}/${branchId}`);
  }
}
