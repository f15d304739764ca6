import type { MessageEvent, SessionClosedEvent, Store } from '@baton/core';
import type { SessionTarget } from './sessionContract.js';

/** Options of {@link committedEvents}. */
export interface CommittedEventsOptions {
  /** Start after this seq (default 0: the whole branch). */
  afterSeq?: number;
  /** Stops the reading (the generator then returns). */
  signal?: AbortSignal;
  /** How often the store is read, in ms (default 250). */
  intervalMs?: number;
}

/**
 * The committed messages of a conversation branch as `message` events, in seq order, as the
 * workers store them (whichever worker runs the turn, a replacement after a kill included: the
 * store is the system of record, so each message comes once), then `session.closed` when the
 * session is closed. Messages appear at the turn's durability points (before a tool runs, at a
 * pause, at the turn's end), not as the model streams. Ends after `session.closed`, or when
 * `signal` aborts.
 *
 * @example
 * ```ts
 * for await (const event of committedEvents(store, { sessionId: 'chat-81' }, { signal })) {
 *   if (event.type === 'message') render(event.message);
 * }
 * ```
 */
export async function* committedEvents(
  store: Store,
  target: SessionTarget,
  options: CommittedEventsOptions = {},
): AsyncGenerator<MessageEvent | SessionClosedEvent, void> {
  const branchId = target.branch ?? 'main';
  const scope = target.tenantId === undefined ? {} : { tenantId: target.tenantId };
  const base = { sessionId: target.sessionId, branchId };
  let afterSeq = options.afterSeq ?? 0;
  while (options.signal?.aborted !== true) {
    const session = await store.getSession(target.sessionId, scope);
    if (session !== undefined) {
      // Read after the session: messages stored before a close are all seen before `session.closed`.
      for (const message of await store.readMessages(target.sessionId, branchId, { fromSeq: afterSeq + 1, ...scope })) {
        afterSeq = message.seq;
        yield { type: 'message', ...base, message };
      }
      if (session.status === 'closed') {
        yield { type: 'session.closed', ...base, reason: session.closedReason ?? 'closed' };
        return;
      }
    }
    await sleep(options.intervalMs ?? 250, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
