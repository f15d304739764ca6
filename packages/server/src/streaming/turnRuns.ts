import { type BatonEvent, ConcurrencyError } from '@baton/core';
import type { TurnStream } from '@baton/handoff';
import { BranchLog, type LogItem } from './branchLog.js';
import type { EventQueue } from './eventQueue.js';

/** How long and how much the server remembers of each branch's events for reconnecting clients. */
export interface TurnRunsOptions {
  /** Events kept per branch (default 5,000). */
  maxEvents?: number;
  /** How long a branch's events are kept after its last turn ended, in ms (default 10 minutes). */
  retainMs?: number;
  /** Branch logs kept at most (default 1,000); the least recently used idle ones go first. */
  maxBranches?: number;
}

/** A turn the server started: the queue its first response reads, and the turn's stream (awaitable for the result). */
export interface StartedRun {
  queue: EventQueue<LogItem>;
  stream: TurnStream;
}

/**
 * The turns running in this server process and the events of each branch (see {@link BranchLog}).
 * A turn runs to its end whether or not anyone listens: the server reads its stream, not the HTTP
 * client, so a client that disconnects never leaves a turn half-done (docs/architecture.md invariant 8).
 */
export class TurnRuns {
  readonly #logs = new Map<string, BranchLog>();
  readonly #maxEvents: number;
  readonly #retainMs: number;
  readonly #maxBranches: number;

  constructor(options: TurnRunsOptions = {}) {
    this.#maxEvents = options.maxEvents ?? 5000;
    this.#retainMs = options.retainMs ?? 10 * 60_000;
    this.#maxBranches = options.maxBranches ?? 1000;
  }

  /** The log of a branch, if this process has one. */
  log(tenantKey: string, sessionId: string, branchId: string): BranchLog | undefined {
    this.#evict(0);
    return this.#logs.get(keyOf(tenantKey, sessionId, branchId));
  }

  /** The log of a branch, created (starting after `headSeq`) when this process has none: for clients that follow a branch. */
  watch(tenantKey: string, sessionId: string, branchId: string, headSeq: number): BranchLog {
    return this.#logFor(tenantKey, sessionId, branchId, headSeq);
  }

  /**
   * Refuses to start a turn while one runs on the branch in this process.
   * @throws {ConcurrencyError} when a turn is running
   */
  assertIdle(tenantKey: string, sessionId: string, branchId: string): void {
    if (this.#logs.get(keyOf(tenantKey, sessionId, branchId))?.running === true) {
      throw new ConcurrencyError(
        `A turn is running on session ${JSON.stringify(sessionId)} branch ${JSON.stringify(branchId)}; follow it with GET /sessions/${sessionId}/events and try again when it has completed.`,
      );
    }
  }

  /**
   * Starts `stream` on the branch: reads its first event here, so a caller's mistake (a closed
   * session, an unknown request) throws before any response is sent, then reads the rest in the
   * background into the branch log.
   *
   * @param headSeq the branch's last message seq before the turn
   * @throws {ConcurrencyError} when a turn is running on the branch; whatever the stream throws before its first event
   */
  async start(tenantKey: string, sessionId: string, branchId: string, headSeq: number, stream: TurnStream): Promise<StartedRun> {
    this.assertIdle(tenantKey, sessionId, branchId);
    const log = this.#logFor(tenantKey, sessionId, branchId, headSeq);
    log.running = true;
    const queue = log.subscribe();
    let first: IteratorResult<BatonEvent, void>;
    try {
      first = await stream.next();
    } catch (error) {
      queue.close();
      log.endRun();
      throw error;
    }
    if (first.done === true) {
      log.endRun();
      return { queue, stream };
    }
    log.append(first.value);
    void this.#drain(log, stream);
    return { queue, stream };
  }

  async #drain(log: BranchLog, stream: TurnStream): Promise<void> {
    try {
      for (;;) {
        const step = await stream.next();
        if (step.done === true) break;
        log.append(step.value);
      }
    } catch {
      // The turn's fatal `error` event is in the log already; the turn runner stored what it committed.
    } finally {
      log.endRun();
    }
  }

  #logFor(tenantKey: string, sessionId: string, branchId: string, headSeq: number): BranchLog {
    const key = keyOf(tenantKey, sessionId, branchId);
    let log = this.#logs.get(key);
    if (log === undefined) {
      this.#evict(1);
      log = new BranchLog(sessionId, branchId, headSeq, this.#maxEvents);
      this.#logs.set(key, log);
    } else {
      log.catchUp(headSeq);
      this.#logs.delete(key);
      this.#logs.set(key, log); // most recently used last
    }
    return log;
  }

  /** Drops idle logs older than `retainMs`, and the least recently used idle ones beyond `maxBranches` (making room for `adding` more). */
  #evict(adding: number): void {
    const now = Date.now();
    let excess = this.#logs.size + adding - this.#maxBranches;
    for (const [key, log] of this.#logs) {
      if (log.busy) continue;
      if (excess > 0 || now - log.lastUsedAt > this.#retainMs) {
        this.#logs.delete(key);
        excess--;
      }
    }
  }
}

function keyOf(tenantKey: string, sessionId: string, branchId: string): string {
  return `${tenantKey}\u0000${sessionId}\u0000${branchId}`;
}
