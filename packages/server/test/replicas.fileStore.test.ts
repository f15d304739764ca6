import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raceReconcilersOnCutTurn } from './support/cutTurnRace.js';
import { client, type ReceivedEvent, sseMessages } from './support/httpClient.js';
import { BILLING_REPLY, type Replica, startProxy, startReplica } from './support/replicas.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (events: readonly ReceivedEvent[]) => events.map((e) => e.id);

describe('replicas on one FileStore behind a round-robin proxy (child processes, 127.0.0.1)', () => {
  let directory: string;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-replicas-'));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.kill()));
    await rm(directory, { recursive: true, force: true });
  });

  it('a turn started on replica 1 is followed on replica 2 mid-turn and after it from every event boundary: every event once, in order; a send there is 409 before any model call', async () => {
    const env = { REPLICA_STORE_DIR: directory, REPLICA_PACE_MS: '60' };
    const [one, two] = await Promise.all([startReplica(env), startReplica(env)]);
    replicas.push(one!, two!);
    const proxy = await startProxy([one!.url, two!.url]);
    try {
      const viaProxy = client(proxy.url);
      expect((await viaProxy.json('POST', '/sessions', { id: 'rr-1' })).status).toBe(201);
      expect((await client(two!.url).json('GET', '/sessions/rr-1')).status).toBe(200); // replica 2 has read the session once
      const turn = await client(one!.url).call(
        'POST',
        '/sessions/rr-1/messages',
        { text: 'I was charged twice' },
        { accept: 'text/event-stream' },
      );
      const reference: ReceivedEvent[] = [];
      let midTurn: ReceivedEvent[] | undefined;
      let refused: { status: number; calls: number } | undefined;
      for await (const event of sseMessages(turn)) {
        reference.push(event);
        if (reference.length === 12 && midTurn === undefined) {
          const callsBefore = await two!.modelCalls();
          const send = await client(two!.url).json('POST', '/sessions/rr-1/messages', { text: 'and again' });
          refused = { status: send.status, calls: (await two!.modelCalls()) - callsBefore };
          expect((await client(two!.url).json('GET', '/sessions/rr-1')).body).toMatchObject({
            running: true,
            routingState: 'running',
          });
          // Replica 2 never ran this turn: it reads the store's event log and follows it by polling.
          const rest = await client(two!.url).stream('GET', '/sessions/rr-1/events', undefined, {
            'last-event-id': event.id,
          });
          midTurn = rest.events;
        }
      }
      expect(refused).toEqual({ status: 409, calls: 0 });
      expect(reference.length).toBeGreaterThanOrEqual(40);
      expect(reference.at(-1)!.event).toBe('turn.completed');
      expect(
        reference
          .filter((e) => e.event === 'message.delta')
          .map((e) => e.data.delta)
          .join(''),
      ).toBe(BILLING_REPLY);
      expect(ids([...reference.slice(0, 12), ...midTurn!])).toEqual(ids(reference));
      expect([...reference.slice(0, 12), ...midTurn!].map((e) => e.data)).toEqual(reference.map((e) => e.data));

      // After the turn, from every boundary, through the proxy (so on both replicas in turn).
      for (let i = 0; i < reference.length; i++) {
        const rest = await viaProxy.stream('GET', '/sessions/rr-1/events', undefined, {
          'last-event-id': reference[i]!.id,
        });
        expect(ids(rest.events), `after ${reference[i]!.id}`).toEqual(ids(reference.slice(i + 1)));
      }
      const stored = new FileStore({ directory });
      const messages = await stored.readMessages('rr-1', 'main');
      expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['I was charged twice']);
      await stored.close();
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('after the owner is SIGKILLed mid-turn, three reconciling replicas take the cut turn over within lease expiry (or lock staleness) + one interval and finish it exactly once', async () => {
    await raceReconcilersOnCutTurn({ REPLICA_STORE_DIR: directory, REPLICA_LOCK_STALE_MS: '2000' }, 'cut-1', replicas);
  }, 120_000);

  it("F4: killed before the turn's first durability point, the turn re-sent on another replica: a client reconnecting with its pre-kill id sees every stored message", async () => {
    const env = { REPLICA_STORE_DIR: directory, REPLICA_EVERY: 'turn', REPLICA_LEASE_MS: '1000' };
    const first = await startReplica({ ...env, REPLICA_PACE_MS: '40' });
    replicas.push(first);
    await client(first.url).json('POST', '/sessions', { id: 'f4-1' });
    const turn = await client(first.url).call(
      'POST',
      '/sessions/f4-1/messages',
      { text: 'I was charged twice' },
      { accept: 'text/event-stream' },
    );
    const seen: ReceivedEvent[] = [];
    for await (const event of sseMessages(turn)) {
      seen.push(event);
      if (event.event === 'message.delta' && seen.filter((e) => e.event === 'message.delta').length === 3) break;
    }
    await first.kill();
    const stale = seen.at(-1)!.id;
    expect(seen.some((e) => e.event === 'message')).toBe(true); // the client saw messages that were never stored
    const second = await startReplica({ ...env, REPLICA_PACE_MS: '0' });
    replicas.push(second);
    let resent = await client(second.url).json('POST', '/sessions/f4-1/messages', { text: 'I was charged twice' });
    for (const deadline = Date.now() + 10_000; resent.status === 409 && Date.now() < deadline; ) {
      await sleep(200); // the dead owner's lease expires
      resent = await client(second.url).json('POST', '/sessions/f4-1/messages', { text: 'I was charged twice' });
    }
    expect(resent.status).toBe(200);
    const stored = new FileStore({ directory });
    try {
      const messages = await stored.readMessages('f4-1', 'main');
      const rest = await client(second.url).stream('GET', '/sessions/f4-1/events', undefined, {
        'last-event-id': stale,
      });
      const shown = rest.events.filter((e) => e.event === 'message').map((e) => e.data.message.id);
      for (const message of messages) expect(shown, `message ${message.seq} (${message.role})`).toContain(message.id);
      expect(new Set(ids(rest.events)).size).toBe(rest.events.length);
    } finally {
      await stored.close();
    }
  }, 120_000);
});
