import { randomUUID } from 'node:crypto';
import {
  type BatonEvent,
  type BranchLeaseStore,
  ConcurrencyError,
  type EventLogStore,
  type HeldLease,
  type Message,
  type Store,
  type TenantScope,
  TurnLease,
} from '@baton/core';
import type { TurnStream } from '@baton/handoff';
import { BranchLog, type LogItem } from './branchLog.js';
import { EventLogWriter } from './eventLogWriter.js';
import type { EventQueue } from './eventQueue.js';
import { runningElsewhere } from './turnLease.js';

/** How long and how much the server remembers of each branch's events for reconnecting clients. */
export interface TurnRunsOptions {
  /** Events kept per branch (default 5,000). */
  maxEvents?: number;
  /** How long a branch's events are kept after its last turn ended, in ms (default 10 minutes). */
  retainMs?: number;
  /** Branch logs kept at most (default 1,000); the least recently used idle ones go first. */
  maxBranches?: number;
  /** This process's owner id on branch leases (default: a random id per app). */
  owner?: string;
  /** How long a branch lease lasts without renewal, in ms (default 15,000; renewed every third of it while the turn runs). */
  leaseTtlMs?: number;
  /** How often a process that does not run a turn polls the store's event log for it, in ms (default 100). */
  pollMs?: number;
  /**
   * How long a client following a turn whose process died keeps waiting for another process to take
   * it over (see `resumeCutTurns`), counted from the dead run's lease expiry, in ms (default 0: its
   * stream ends when the lease expires). `createBatonApp` with `reconcile` sets it to the reconciler's
   * `olderThanMs + intervalMs` plus a second, so a reconnecting client sees the takeover's events.
   */
  cutTurnWaitMs?: number;
}

/** The tenant scope of a tenant key (`''`: no tenant). */
export function scopeOfKey(tenantKey: string): TenantScope {
  return tenantKey === '' ? {} : { tenantId: tenantKey };
}

/** The store's event log, when it has one. */
export function eventLogOf(store: Store | undefined): EventLogStore | undefined {
  return typeof store?.appendEvents === 'function' &&
    typeof store.readEvents === 'function' &&
    typeof store.pruneEvents === 'function'
    ? (store as EventLogStore)
    : undefined;
}

/** The store's branch leases, when it has them. */
export function leasesOf(store: Store | undefined): BranchLeaseStore | undefined {
  return typeof store?.acquireBranchLease === 'function' && typeof store.getBranchLease === 'function'
    ? (store as BranchLeaseStore)
    : undefined;
}

/** A turn the server started: the queue its first response reads, and the turn's stream (awaitable for the result). */
export interface StartedRun {
  queue: EventQueue<LogItem>;
  stream: TurnStream;
  /** Resolves when the run ended here: its events written to the store's log, its lease released. */
  ended: Promise<void>;
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
  /** The store's event log, when it has one: every turn's events are written there too. */
  readonly eventLog: EventLogStore | undefined;
  /** The store's leases, when it has them: a turn runs only under its branch's lease. */
  readonly leases: BranchLeaseStore | undefined;
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly pollMs: number;
  readonly cutTurnWaitMs: number;
  readonly #store: Store | undefined;

  /** @param store the workflow's store (its event log and leases are used when it has them) */
  constructor(options: TurnRunsOptions = {}, store?: Store) {
    this.#maxEvents = options.maxEvents ?? 5000;
    this.#retainMs = options.retainMs ?? 10 * 60_000;
    this.#maxBranches = options.maxBranches ?? 1000;
    this.eventLog = eventLogOf(store);
    this.leases = leasesOf(store);
    this.owner = options.owner ?? `baton-${randomUUID()}`;
    this.leaseTtlMs = options.leaseTtlMs ?? 15_000;
    this.pollMs = options.pollMs ?? 100;
    this.cutTurnWaitMs = options.cutTurnWaitMs ?? 0;
    this.#store = store;
  }

  /** How much of each branch's log the store keeps (the same bounds as this process's logs). */
  get retention(): { maxEvents: number; maxAgeMs: number } {
    return { maxEvents: this.#maxEvents, maxAgeMs: this.#retainMs };
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
   * @param call starts the turn; it gets the lease the run holds (when the store has leases), to hand on
   *   to a runner that runs the turn in another process
   * @throws {ConcurrencyError} when a turn is running on the branch; whatever the stream throws before its first event
   */
  async start(
    tenantKey: string,
    sessionId: string,
    branchId: string,
    headSeq: number,
    call: (lease?: HeldLease) => TurnStream,
    options: { expired?: boolean; afterCut?: boolean } = {},
  ): Promise<StartedRun> {
    this.assertIdle(tenantKey, sessionId, branchId);
    const log = this.#logFor(tenantKey, sessionId, branchId, headSeq);
    log.running = true;
    let run: RunParts;
    try {
      // The lease first: a branch whose turn runs in another process is refused before any model call.
      run = await this.#runParts(tenantKey, sessionId, branchId, headSeq, options.expired === true);
    } catch (error) {
      log.endRun();
      throw error;
    }
    const epoch = run.lease?.epoch ?? 0;
    // A cut run may have stored messages whose events never reached the log: they are logged first, in this epoch.
    const unlogged =
      options.expired === true || options.afterCut === true
        ? await this.#unlogged(tenantKey, sessionId, branchId, epoch, headSeq)
        : [];
    // Subscribed first: the caller's response carries the unlogged messages too (its client may have missed them).
    const queue = log.subscribe();
    log.beginRun(epoch, (unlogged[0]?.seq ?? headSeq + 1) - 1);
    for (const message of unlogged) this.#log(log, run, { type: 'message', sessionId, branchId, message });
    log.beginRun(epoch, headSeq);
    let stream: TurnStream;
    let first: IteratorResult<BatonEvent, void>;
    try {
      stream = call(run.lease && { owner: run.lease.lease.owner, epoch: run.lease.epoch });
      first = await stream.next();
    } catch (error) {
      queue.close();
      await this.#endRun(log, run);
      throw error;
    }
    if (first.done === true) {
      await this.#endRun(log, run);
      return { queue, stream, ended: Promise.resolve() };
    }
    this.#log(log, run, first.value);
    return { queue, stream, ended: this.#drain(log, stream, run) };
  }

  /**
   * The stored messages up to `headSeq` that come after the last event in the store's log (a run
   * killed after storing them, before its events were written); none when the log is empty, or
   * on a failed read (the turn goes on; followers then miss them, as before).
   */
  async #unlogged(
    tenantKey: string,
    sessionId: string,
    branchId: string,
    epoch: number,
    headSeq: number,
  ): Promise<Message[]> {
    if (this.eventLog === undefined || this.#store === undefined || epoch <= 1) return [];
    const scope = scopeOfKey(tenantKey);
    try {
      // The previous epochs' entries first (one run's events); the whole log only when they logged nothing.
      let { entries } = await this.eventLog.readEvents(sessionId, branchId, {
        after: { epoch: epoch - 1, seq: 0, index: 0 },
        ...scope,
      });
      if (entries.length === 0) ({ entries } = await this.eventLog.readEvents(sessionId, branchId, scope));
      const last = entries.at(-1)?.position;
      if (last === undefined || last.seq >= headSeq) return [];
      const stored = await this.#store.readMessages(sessionId, branchId, { ...scope, fromSeq: last.seq + 1 });
      return stored.filter((message) => message.seq <= headSeq);
    } catch {
      return [];
    }
  }

  async #runParts(
    tenantKey: string,
    sessionId: string,
    branchId: string,
    headSeq: number,
    expired: boolean,
  ): Promise<RunParts> {
    const scope = scopeOfKey(tenantKey);
    const lease =
      this.leases &&
      (await TurnLease.take(this.leases, sessionId, branchId, scope, {
        owner: this.owner,
        ttlMs: this.leaseTtlMs,
        expired,
        refusal: () => runningElsewhere(sessionId, branchId),
      }));
    const writer = this.eventLog && new EventLogWriter(this.eventLog, sessionId, branchId, scope);
    return { lease, writer, headSeq, messageIds: new Set(), failed: false };
  }

  async #drain(log: BranchLog, stream: TurnStream, run: RunParts): Promise<void> {
    try {
      for (;;) {
        const step = await stream.next();
        if (step.done === true) break;
        this.#log(log, run, step.value);
      }
    } catch {
      // The turn's fatal `error` event is in the log already; the turn runner stored what it committed.
    } finally {
      await this.#endRun(log, run);
    }
  }

  /** Appends a run's event to the branch log (and the store's), noting what the run's end checks. */
  #log(log: BranchLog, run: RunParts, event: BatonEvent): void {
    if (event.type === 'message') run.messageIds.add(event.message.id);
    if (event.type === 'error') run.failed = true;
    run.writer?.push(log.append(event));
  }

  /**
   * After a run that failed (its write lost to messages it had not loaded, e.g. stored by a run its
   * lease expired under): the messages stored on the branch since the run began that it did not
   * send, logged as `message` events after its last, so followers see what the branch holds.
   */
  async #logStoredAfterFailure(log: BranchLog, run: RunParts): Promise<void> {
    if (!run.failed || this.#store === undefined || run.writer === undefined) return;
    try {
      const stored = await this.#store.readMessages(log.sessionId, log.branchId, {
        ...run.writer.scope,
        fromSeq: run.headSeq + 1,
      });
      for (const message of stored)
        if (!run.messageIds.has(message.id))
          this.#log(log, run, { type: 'message', sessionId: log.sessionId, branchId: log.branchId, message });
    } catch {
      // Unread now: the next run that takes the branch over after a cut logs what is still missing.
    }
  }

  /** Ends a run: its events written to the store's log (then pruned), its lease released, then local readers told. */
  async #endRun(log: BranchLog, run: RunParts): Promise<void> {
    try {
      await this.#logStoredAfterFailure(log, run);
      await run.writer?.flush();
      await this.eventLog?.pruneEvents(log.sessionId, log.branchId, this.retention, run.writer!.scope);
    } catch (error) {
      console.error('[baton/server] the event log of', log.sessionId, log.branchId, 'could not be written:', error);
    } finally {
      await run.lease?.release();
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

/** What a run holds besides its log: the branch's lease and the writer of the store's event log (each when the store has them). */
interface RunParts {
  lease: TurnLease | undefined;
  writer: EventLogWriter | undefined;
  /** The branch's last message seq when the run began. */
  headSeq: number;
  /** Ids of the messages the run sent. */
  messageIds: Set<string>;
  /** The run sent a fatal `error` event. */
  failed: boolean;
}

function keyOf(tenantKey: string, sessionId: string, branchId: string): string {
  return `${tenantKey}\u0000${sessionId}\u0000${branchId}`;
}
