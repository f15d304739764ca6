import type { BatonEvent } from '@baton/core';
import { comparePositions, type EventPosition, formatEventId } from './eventId.js';
import { EventQueue } from './eventQueue.js';

/** An event as the server sent it: its SSE id, its position in the branch, the event. */
export interface LoggedEvent {
  id: string;
  position: EventPosition;
  event: BatonEvent;
}

/** What a subscriber of a {@link BranchLog} receives: events, and the end of each run. */
export type LogItem = { kind: 'event'; logged: LoggedEvent } | { kind: 'run.ended' };

/**
 * The events this server process sent on one session branch, for clients that reconnect with
 * `Last-Event-ID`: every event after {@link BranchLog.start} is here (up to `maxEvents`; older ones
 * are dropped and `start` moves past them), and subscribers get new events as they are appended.
 *
 * @example
 * ```ts
 * const log = new BranchLog('chat-81', 'main', 4, 1000);
 * log.append({ type: 'turn.started', sessionId: 'chat-81', branchId: 'main', turn: 3 }); // id 'chat-81/main/4.1'
 * ```
 */
export class BranchLog {
  readonly #events: LoggedEvent[] = [];
  readonly #subscribers = new Set<EventQueue<LogItem>>();
  #start: EventPosition;
  #cursor: EventPosition;
  /** No run began since the log (re)started: which epoch its start belongs to is not known yet. */
  #startEpochUnknown = true;
  /** Whether a turn is running on the branch in this process. */
  running = false;
  /** When the log was last used (ms since the epoch), for eviction. */
  lastUsedAt = Date.now();

  /**
   * @param headSeq the seq of the branch's last stored message when the log starts
   * @param maxEvents how many events the log keeps (older ones are dropped)
   */
  constructor(
    readonly sessionId: string,
    readonly branchId: string,
    headSeq: number,
    readonly maxEvents: number,
  ) {
    this.#start = { seq: headSeq, index: 0 };
    this.#cursor = this.#start;
  }

  /** The position of the last event appended (or where the log started). */
  get cursor(): EventPosition {
    return this.#cursor;
  }

  /** Starts a turn run of lease epoch `epoch` on top of `headSeq` (the branch's last stored message). */
  beginRun(epoch: number, headSeq: number): void {
    this.running = true;
    const start = { epoch, seq: headSeq, index: 0 };
    // The log's start is this run's: a position of an older epoch (another process's run) is not covered.
    if (this.#startEpochUnknown && this.#events.length === 0) this.#start = start;
    this.#startEpochUnknown = false;
    if (comparePositions(start, this.#cursor) > 0) this.#cursor = start;
  }

  /** Starts again from `headSeq` when the branch grew without this log (another process wrote); what was logged is dropped. */
  catchUp(headSeq: number): void {
    if (headSeq <= this.#cursor.seq) return;
    this.#events.length = 0;
    this.#start = { seq: headSeq, index: 0 };
    this.#cursor = this.#start;
    this.#startEpochUnknown = true;
  }

  /**
   * Whether every event after `position` is in the log. Until a run begins here, the log's start has
   * no epoch, so only positions without one (stored messages) can be covered.
   */
  covers(position: EventPosition): boolean {
    if (this.#startEpochUnknown && (position.epoch ?? 0) > 0) return false;
    return comparePositions(position, this.#start) >= 0;
  }

  /** The logged events after `position`, oldest first. */
  after(position: EventPosition): LoggedEvent[] {
    return this.#events.filter((e) => comparePositions(e.position, position) > 0);
  }

  /**
   * The logged events after stored message `seq` (its own `message` event and everything before it
   * left out), whatever their epoch: what a client replayed up to that message from the store still misses.
   */
  afterMessage(seq: number): LoggedEvent[] {
    return this.#events.filter((e) => e.position.seq > seq || (e.position.seq === seq && e.position.index > 0));
  }

  /** Gives `event` its position and id, keeps it, and passes it to every subscriber. */
  append(event: BatonEvent): LoggedEvent {
    const seq = event.type === 'message' ? event.message.seq : -1;
    const { epoch } = this.#cursor;
    const next = seq > this.#cursor.seq ? { seq, index: 0 } : { seq: this.#cursor.seq, index: this.#cursor.index + 1 };
    this.#cursor = epoch === undefined ? next : { epoch, ...next };
    const logged = { id: formatEventId(this.sessionId, this.branchId, this.#cursor), position: this.#cursor, event };
    this.#events.push(logged);
    if (this.#events.length > this.maxEvents) this.#start = this.#events.shift()!.position;
    this.lastUsedAt = Date.now();
    for (const subscriber of this.#subscribers) subscriber.push({ kind: 'event', logged });
    return logged;
  }

  /** Tells subscribers the running turn ended. */
  endRun(): void {
    this.running = false;
    this.lastUsedAt = Date.now();
    for (const subscriber of this.#subscribers) subscriber.push({ kind: 'run.ended' });
  }

  /** A queue of what happens on the branch from now on; leave it with `close()` (or by leaving its loop). */
  subscribe(): EventQueue<LogItem> {
    const queue: EventQueue<LogItem> = new EventQueue(() => this.#subscribers.delete(queue));
    this.#subscribers.add(queue);
    return queue;
  }

  /** Whether anyone listens (a log with listeners or a running turn is never evicted). */
  get busy(): boolean {
    return this.running || this.#subscribers.size > 0;
  }
}
