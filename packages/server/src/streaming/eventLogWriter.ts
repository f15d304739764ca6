import type { EventLogEntry, EventLogStore, TenantScope } from '@baton/core';
import type { LoggedEvent } from './branchLog.js';

/**
 * Writes a running turn's events to the store's event log behind the turn: events wait in memory
 * while one write is in flight, and the next write takes all of them (one batch, one round trip),
 * so a burst of deltas costs a few writes, not one each. A failed write is retried with the next
 * batch; `flush()` waits until everything queued is written (or throws the last failure).
 *
 * @example
 * ```ts
 * const writer = new EventLogWriter(store, 'chat-1', 'main', { tenantId: 'acme' });
 * writer.push(logged);
 * await writer.flush();
 * ```
 */
export class EventLogWriter {
  readonly #pending: EventLogEntry[] = [];
  #writing: Promise<void> | undefined;
  #failure: unknown;
  /** Writes made (batches), for the cost a turn's log has. */
  writes = 0;

  constructor(
    readonly store: EventLogStore,
    readonly sessionId: string,
    readonly branchId: string,
    readonly scope: TenantScope,
  ) {}

  /** Queues an event for the log and starts a write unless one is in flight. */
  push(logged: LoggedEvent): void {
    const { epoch = 0, seq, index } = logged.position;
    this.#pending.push({ position: { epoch, seq, index }, event: logged.event });
    this.#writing ??= this.#drain();
  }

  /** Resolves once every queued event is written. @throws the store's error when the last write failed */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
    if (this.#pending.length > 0) {
      this.#writing = this.#drain();
      await this.#writing;
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0);
        try {
          await this.store.appendEvents(this.sessionId, this.branchId, batch, this.scope);
          this.writes++;
          this.#failure = undefined;
        } catch (error) {
          // Kept for the next write, in order; flush() reports the failure if it persists.
          this.#pending.unshift(...batch);
          this.#failure = error;
          return;
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }
}
