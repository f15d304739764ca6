import type { Branch } from '@baton/core';

/**
 * The branches of recently used sessions, in process memory, so that an append or a checkpoint
 * save needs no read to know its branch exists, and a read needs none to follow a fork's parent.
 * Only `id` and `parent` of a cached branch are used: they never change after a fork. A session's
 * entry is dropped when this store deletes the session or one of its branches; a delete made by
 * another process is not seen (MongoDB has no cheap way to tell), see the README.
 *
 * Bounded: past `capacity` sessions the least recently used is forgotten.
 */
export class BranchCache {
  readonly #sessions = new Map<string, Map<string, Branch>>();
  /** The last seq of a branch's own messages, when this store knows it (`<sessionId>/<branchId>` → seq). */
  readonly #lastSeqs = new Map<string, number>();

  /** @param capacity how many sessions to remember; 0 turns the cache off */
  constructor(readonly capacity: number) {}

  /** The cached branch, or `undefined` when this session's branches were not loaded or it is unknown. */
  get(sessionId: string, branchId: string): Branch | undefined {
    const branches = this.#sessions.get(sessionId);
    if (branches === undefined) return undefined;
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, branches);
    return branches.get(branchId);
  }

  /** Every cached branch of the session (complete only after {@link replace}), or `undefined`. */
  all(sessionId: string): Map<string, Branch> | undefined {
    return this.#sessions.get(sessionId);
  }

  /**
   * The last seq of the branch's own messages as this store last saw it (`undefined`: unknown). Another
   * process may have appended since: callers treat it as a hint and re-read on a surprise.
   */
  lastSeq(sessionId: string, branchId: string): number | undefined {
    return this.#sessions.has(sessionId) ? this.#lastSeqs.get(`${sessionId}/${branchId}`) : undefined;
  }

  /** Records the branch's last own seq (after an append or a read of it). */
  setLastSeq(sessionId: string, branchId: string, seq: number): void {
    if (this.#sessions.get(sessionId)?.has(branchId)) this.#lastSeqs.set(`${sessionId}/${branchId}`, seq);
  }

  /** Forgets the branch's last seq (after a lost race: it is read again on the next append). */
  dropLastSeq(sessionId: string, branchId: string): void {
    this.#lastSeqs.delete(`${sessionId}/${branchId}`);
  }

  /** Records the full branch list of a session, as just read from the database. */
  replace(sessionId: string, branches: readonly Branch[]): void {
    const kept = new Set(branches.map((b) => b.id));
    for (const branchId of this.#sessions.get(sessionId)?.keys() ?? []) {
      if (!kept.has(branchId)) this.#lastSeqs.delete(`${sessionId}/${branchId}`);
    }
    this.#sessions.delete(sessionId);
    if (this.capacity === 0) return;
    this.#sessions.set(sessionId, new Map(branches.map((b) => [b.id, b])));
    this.#evict();
  }

  /** Adds one branch to a session's cached list (after a create or a fork this store made). */
  add(branch: Branch): void {
    const branches = this.#sessions.get(branch.sessionId);
    if (branches === undefined) this.replace(branch.sessionId, [branch]);
    else branches.set(branch.id, branch);
  }

  /** Forgets a session (after a delete). */
  forget(sessionId: string): void {
    const branches = this.#sessions.get(sessionId);
    if (branches === undefined) return;
    for (const branchId of branches.keys()) this.#lastSeqs.delete(`${sessionId}/${branchId}`);
    this.#sessions.delete(sessionId);
  }

  #evict(): void {
    while (this.#sessions.size > this.capacity) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) return;
      this.forget(oldest);
    }
  }
}
