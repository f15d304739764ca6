import { InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client, type ReceivedEvent, sseMessages } from './support/httpClient.js';
import { createGate, until } from './support/serverDesk.js';

/** Brings a session to the pending refund approval, and returns the approval request id. */
async function toApproval(ann: ReturnType<typeof client>, id: string): Promise<string> {
  await ann.json('POST', '/sessions', { id });
  const asked = await ann.json('POST', `/sessions/${id}/messages`, { text: 'I was charged twice' });
  const approval = await ann.json('POST', `/sessions/${id}/requests/${asked.body.pendingRequests[0].id}`, {
    text: '1234',
  });
  return approval.body.pendingRequests[0].id;
}

/** Reads an SSE response until `stop` says so, then disconnects (aborts the request). */
async function readUntil(
  response: Response,
  controller: AbortController,
  stop: (events: ReceivedEvent[]) => boolean,
): Promise<ReceivedEvent[]> {
  const events: ReceivedEvent[] = [];
  for await (const event of sseMessages(response)) {
    events.push(event);
    if (stop(events)) break;
  }
  controller.abort();
  return events;
}

const deltas = (events: readonly ReceivedEvent[]) => events.filter((e) => e.event === 'message.delta').length;

describe('a client that disconnects mid-turn and reconnects with Last-Event-ID', () => {
  it('sees every event exactly once and in order: the missed ones from the log, then the live rest', async () => {
    const gate = createGate();
    const server = await startDeskServer({ gate: gate.wait });
    try {
      const ann = client(server.url);
      const approvalId = await toApproval(ann, 'resume-1');
      // A supervisor follows the branch the whole time: the reference of what was sent.
      const followController = new AbortController();
      const follower = await ann.call(
        'GET',
        '/sessions/resume-1/events?follow=true',
        undefined,
        { accept: 'text/event-stream' },
        followController.signal,
      );
      const followed = readUntil(follower, followController, (events) => events.at(-1)?.event === 'turn.completed');

      gate.close();
      gate.allow(3);
      const controller = new AbortController();
      const response = await ann.call(
        'POST',
        `/sessions/resume-1/requests/${approvalId}`,
        { approved: true },
        { accept: 'text/event-stream' },
        controller.signal,
      );
      const before = await readUntil(response, controller, (events) => deltas(events) === 2);
      expect(before.at(-1)!.event).toBe('message.delta');

      // While nobody listens on the turn's own response, the turn goes on.
      gate.allow(4);
      await until(() => gate.waiting > 0);
      const reconnect = await ann.call('GET', '/sessions/resume-1/events', undefined, {
        accept: 'text/event-stream',
        'last-event-id': before.at(-1)!.id,
      });
      expect(reconnect.status).toBe(200);
      const rest: ReceivedEvent[] = [];
      const reading = (async () => {
        for await (const event of sseMessages(reconnect)) rest.push(event);
      })();
      await until(() => deltas(rest) >= 3); // the missed ones, replayed from the log
      gate.open();
      await reading;

      const seen = [...before, ...rest];
      const reference = await followed;
      expect(seen.map((e) => e.id)).toEqual(reference.map((e) => e.id));
      expect(seen.map((e) => e.data)).toEqual(reference.map((e) => e.data));
      expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
      expect(seen.filter((e) => e.event === 'turn.completed')).toHaveLength(1);
      expect(
        seen
          .filter((e) => e.event === 'message.delta')
          .map((e) => e.data.delta)
          .join(''),
      ).toBe('All done. Refunded 40 EUR for order 1234. Anything else I can do for you today?');
      expect(server.refunds).toEqual(['1234:40']);
    } finally {
      gate.open();
      await server.close();
    }
  });

  it('a turn nobody listens to runs to its end; a reconnect after it gets the missed events and the stream ends', async () => {
    const gate = createGate();
    const server = await startDeskServer({ gate: gate.wait });
    try {
      const ann = client(server.url);
      const approvalId = await toApproval(ann, 'resume-2');
      gate.close();
      gate.allow(2);
      const controller = new AbortController();
      const response = await ann.call(
        'POST',
        `/sessions/resume-2/requests/${approvalId}`,
        { approved: true },
        { accept: 'text/event-stream' },
        controller.signal,
      );
      const before = await readUntil(response, controller, (events) => deltas(events) === 1);
      await until(() => gate.waiting > 0);
      // The client is gone and the turn is held mid-stream: GET answers at once, without waiting for the turn.
      const during = await ann.json('GET', '/sessions/resume-2');
      expect(during.body).toMatchObject({ running: true, routingState: 'running', pendingRequests: [] });
      gate.open();
      // Nobody listens, yet the turn runs to its end.
      let info = await ann.json('GET', '/sessions/resume-2');
      while (info.body.running === true) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        info = await ann.json('GET', '/sessions/resume-2');
      }
      expect(info.body).toMatchObject({ running: false, routingState: 'idle', pendingRequests: [] });
      const stored = await ann.json('GET', '/sessions/resume-2/messages');
      expect(stored.body.messages.at(-1)).toMatchObject({
        role: 'assistant',
        content: expect.stringContaining('Refunded 40 EUR'),
      });

      const rest = await ann.stream('GET', '/sessions/resume-2/events', undefined, {
        'last-event-id': before.at(-1)!.id,
      });
      expect(rest.events.at(-1)!.event).toBe('turn.completed');
      const seen = [...before, ...rest.events];
      expect(seen[0]!.event).toBe('turn.started');
      expect(
        seen
          .filter((e) => e.event === 'message.delta')
          .map((e) => e.data.delta)
          .join(''),
      ).toBe(stored.body.messages.at(-1).content);
      expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    } finally {
      gate.open();
      await server.close();
    }
  });

  it("after a server restart the store's event log replays every event after the Last-Event-ID, deltas included", async () => {
    const store = new InMemoryStore();
    const first = await startDeskServer({ store });
    const ann = client(first.url);
    await ann.json('POST', '/sessions', { id: 'resume-3' });
    const turn = await ann.stream('POST', '/sessions/resume-3/messages', { text: 'I was charged twice' });
    await first.close();
    const lastSeen = turn.events.find((e) => e.event === 'message' && e.data.message.seq === 1)!;
    expect(lastSeen.id).toBe('resume-3/main/1:1.0'); // lease epoch 1, seq 1, index 0

    const second = await startDeskServer({ store });
    try {
      const replay = await client(second.url).stream('GET', '/sessions/resume-3/events', undefined, {
        'last-event-id': lastSeen.id,
      });
      const missed = turn.events.slice(turn.events.indexOf(lastSeen) + 1);
      expect(replay.events.map((e) => e.id)).toEqual(missed.map((e) => e.id));
      expect(replay.events.map((e) => e.data)).toEqual(missed.map((e) => e.data));
      expect(replay.events.some((e) => e.event !== 'message')).toBe(true); // not only the stored messages
      expect(replay.events.filter((e) => e.event === 'message').map((e) => e.data.message.seq)).toEqual([2, 3, 4]);
      const bad = await client(second.url).json('GET', '/sessions/resume-3/events?lastEventId=other/main/1.0');
      expect(bad.status).toBe(400);
      const garbled = await client(second.url).json('GET', '/sessions/resume-3/events?lastEventId=nonsense');
      expect(garbled.body.error.message).toContain('Last-Event-ID "nonsense"');
    } finally {
      await second.close();
    }
  });

  it('an id without an epoch names a stored message (as a reloaded page sends): the events after it, not the whole log', async () => {
    const store = new InMemoryStore();
    const server = await startDeskServer({ store });
    try {
      const ann = client(server.url);
      await ann.json('POST', '/sessions', { id: 'resume-4' });
      const first = await ann.stream('POST', '/sessions/resume-4/messages', { text: 'I was charged twice' });
      const shownSeq = Math.max(
        ...first.events.filter((e) => e.event === 'message').map((e) => e.data.message.seq as number),
      );
      const asked = first.events.find((e) => e.event === 'request')!.data.request.id;
      const second = await ann.stream('POST', `/sessions/resume-4/requests/${asked}`, { text: '1234' });
      const replay = await ann.stream('GET', `/sessions/resume-4/events?lastEventId=resume-4/main/${shownSeq}.0`);
      const shown = first.events.findIndex((e) => e.event === 'message' && e.data.message.seq === shownSeq);
      const after = [...first.events.slice(shown + 1), ...second.events];
      expect(replay.events.map((e) => e.id)).toEqual(after.map((e) => e.id)); // on fb3cbdf: the whole log again
    } finally {
      await server.close();
    }
  });
});
