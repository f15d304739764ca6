import type { EventLogPosition, Message } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import type { LoggedEvent, LogItem } from '../streaming/branchLog.js';
import { comparePositions, type EventPosition, formatEventId, parseEventId } from '../streaming/eventId.js';
import { EventQueue } from '../streaming/eventQueue.js';
import { sseResponse } from '../streaming/sse.js';
import { loggedOf, runsSomewhere, type StoreTailSource } from '../streaming/storeTail.js';
import { StoreTails } from '../streaming/storeTails.js';
import { type Principal, tenantKeyOf } from './auth.js';
import { HttpError } from './errors.js';
import type { BatonHono, RouteContext } from './routeContext.js';
import { queryOf } from './routeContext.js';
import { scopeOf, sessionDocument } from './sessionAccess.js';

/**
 * The event route of `createBatonApp`: `GET /sessions/:id/events?branch=&follow=` with
 * `Last-Event-ID` (or `?lastEventId=`) → what the client missed, then the live rest of the running
 * turn (and, with `follow=true`, of later turns). A turn run by another process is followed by
 * polling the store's event log, once per interval per branch however many clients follow it.
 *
 * @example
 * ```ts
 * registerEventRoutes(app, createRouteContext(workflow, runs, 15_000));
 * ```
 */
export function registerEventRoutes(app: BatonHono, routes: RouteContext): void {
  const { workflow, runs, keepAliveMs } = routes;
  // One store poller per branch, shared by every client of this process that follows it.
  const tails = new StoreTails();

  app.get('/sessions/:id/events', async (c) => {
    const q = queryOf(c);
    const id = c.req.param('id');
    await sessionDocument(workflow, c.var.principal, id);
    const lastEventId = c.req.header('last-event-id') ?? q.lastEventId;
    const from = lastEventId === undefined ? undefined : parseEventId(lastEventId);
    if (
      from !== undefined &&
      (from.sessionId !== id || (c.req.query('branch') !== undefined && from.branchId !== q.branch))
    ) {
      throw new HttpError(
        400,
        'INVALID_LAST_EVENT_ID',
        `Last-Event-ID ${JSON.stringify(lastEventId)} is not an event of session ${JSON.stringify(id)} branch ${JSON.stringify(q.branch)}.`,
      );
    }
    const branch = from?.branchId ?? q.branch;
    const follow = q.follow === 'true' || q.follow === '1';
    const tenantKey = tenantKeyOf(c.var.principal);
    // The store's event log is the truth when it has one; this process's log is its cache while a turn runs here.
    if (runs.eventLog !== undefined && runs.log(tenantKey, id, branch)?.running !== true) {
      const source = {
        eventLog: runs.eventLog,
        leases: runs.leases,
        sessionId: id,
        branchId: branch,
        scope: scopeOf(c.var.principal),
        pollMs: runs.pollMs,
        cutTurnWaitMs: runs.cutTurnWaitMs,
      };
      const { replay, after } = await storeReplay(workflow, source, from?.position);
      const queue = follow
        ? runs.watch(tenantKey, id, branch, await headSeqOf(workflow, c.var.principal, id, branch)).subscribe()
        : new EventQueue<LogItem>();
      const live = follow || (await runsSomewhere(source));
      if (live) tails.add(`${tenantKey}\u0000${id}\u0000${branch}`, source, queue, after, follow);
      else queue.close();
      return sseResponse(c, { replay, queue: live ? queue : undefined, after, follow, keepAliveMs });
    }
    const log = follow
      ? runs.watch(tenantKey, id, branch, await headSeqOf(workflow, c.var.principal, id, branch))
      : runs.log(tenantKey, id, branch);
    const queue = log?.subscribe();
    const replay: LoggedEvent[] = [];
    let after: EventPosition = from?.position ?? log?.cursor ?? { seq: Number.MAX_SAFE_INTEGER, index: 0 };
    if (from !== undefined && log?.covers(from.position) === true) replay.push(...log.after(from.position));
    else if (from !== undefined) {
      const stored = await workflow.config.store.readMessages(id, branch, {
        ...scopeOf(c.var.principal),
        fromSeq: from.position.seq + 1,
      });
      replay.push(...stored.map((message) => storedEvent(id, branch, message)));
      if (log !== undefined) {
        // This process's run events after the last stored message (an older epoch's position orders before all of them).
        const through = stored.at(-1)?.seq;
        replay.push(...(through === undefined ? log.after(from.position) : log.afterMessage(through)));
      }
    }
    after = replay.at(-1)?.position ?? after;
    const live = follow || log?.running === true;
    if (!live) queue?.close();
    return sseResponse(c, { replay, queue: live ? queue : undefined, after, follow, keepAliveMs });
  });
}

/** A stored message as the `message` event a reconnecting client missed (position `<seq>.0`). */
function storedEvent(sessionId: string, branchId: string, message: Message): LoggedEvent {
  const position = { seq: message.seq, index: 0 };
  return {
    id: formatEventId(sessionId, branchId, position),
    position,
    event: { type: 'message', sessionId, branchId, message },
  };
}

/**
 * What a client that last saw `from` missed, read from the store: the event log's entries after it
 * when the log still covers it; otherwise the stored messages after it up to where the log starts
 * (as `message` events), then the whole log. Without `from`: nothing, from the log's end.
 */
async function storeReplay(
  workflow: HandoffWorkflow,
  source: StoreTailSource,
  from: EventPosition | undefined,
): Promise<{ replay: LoggedEvent[]; after: EventPosition }> {
  const { eventLog, sessionId, branchId, scope } = source;
  let position = from === undefined ? undefined : { epoch: from.epoch ?? 0, seq: from.seq, index: from.index };
  // An id without an epoch names a stored message (replayed from the store, or built by a page from the last
  // message it shows): where the log holds that message, it stands for the message's entry, not the log's start.
  if (position !== undefined && position.epoch === 0 && position.index === 0)
    position = (await loggedMessagePosition(source, position.seq)) ?? position;
  const page = await eventLog.readEvents(sessionId, branchId, {
    ...(position === undefined ? {} : { after: position }),
    ...scope,
  });
  const logged = page.entries.map((entry) => loggedOf(sessionId, branchId, entry));
  if (from === undefined) {
    const end = page.entries.at(-1)?.position ??
      page.start ?? { epoch: 0, seq: await headSeqOf(workflow, scope, sessionId, branchId), index: 0 };
    return { replay: [], after: end };
  }
  if (page.start !== undefined && comparePositions(from, page.start) >= 0)
    return { replay: logged, after: logged.at(-1)?.position ?? from };
  const stored = await workflow.config.store.readMessages(sessionId, branchId, { ...scope, fromSeq: from.seq + 1 });
  // A log that began with a message (index 0) records that message's own position as its start: it is logged.
  const first = page.entries[0]?.position;
  const startLogged = page.start !== undefined && first !== undefined && comparePositions(first, page.start) === 0;
  const before = stored
    .filter(
      (message) =>
        page.start === undefined || message.seq < page.start.seq || (message.seq === page.start.seq && !startLogged),
    )
    .map((message) => storedEvent(sessionId, branchId, message));
  const replay = [...before, ...logged];
  return { replay, after: replay.at(-1)?.position ?? from };
}

/** The position of the newest logged `message` entry of stored message `seq`, if the log holds one. */
async function loggedMessagePosition(source: StoreTailSource, seq: number): Promise<EventLogPosition | undefined> {
  const { entries } = await source.eventLog.readEvents(source.sessionId, source.branchId, source.scope);
  return entries.findLast((entry) => entry.event.type === 'message' && entry.event.message.seq === seq)?.position;
}

async function headSeqOf(workflow: HandoffWorkflow, principal: Principal, id: string, branch: string): Promise<number> {
  const messages = await workflow.config.store.readMessages(id, branch, scopeOf(principal));
  return messages.at(-1)?.seq ?? 0;
}
