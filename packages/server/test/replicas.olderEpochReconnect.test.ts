/**
 * A client whose last event is from an older turn run on replica 1, while replica 2 ran the next turn
 * (another tab, or a reconnect that landed there), reconnects to replica 1 while it runs the turn
 * after: replica 1's in-process log started over when the branch grew without it, so it does not hold
 * what the client missed. The client must still get every stored message it has not seen, once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type ReceivedEvent, sseMessages } from './support/httpClient.js';
import { type Replica, startReplica } from './support/replicas.js';

describe('a reconnect to a replica with an id from a turn run before another replica ran one', () => {
  let directory: string;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-older-epoch-'));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.kill()));
    await rm(directory, { recursive: true, force: true });
  });

  it('gets the other replica’s messages and the running turn’s, each message once', async () => {
    const env = { REPLICA_STORE_DIR: directory, REPLICA_PACE_MS: '40' };
    const [one, two] = await Promise.all([startReplica(env), startReplica(env)]);
    replicas.push(one!, two!);
    const oneApi = client(one!.url);
    expect((await oneApi.json('POST', '/sessions', { id: 'older-1' })).status).toBe(201);
    const first = await oneApi.stream('POST', '/sessions/older-1/messages', { text: 'I was charged twice' });
    const lastSeen = first.events.at(-1)!.id;
    expect(first.events.at(-1)!.event).toBe('turn.completed');
    // The next turn runs on replica 2; this client sees none of it.
    expect((await client(two!.url).json('POST', '/sessions/older-1/messages', { text: 'and again' })).status).toBe(200);
    const seenBefore = (await new FileStore({ directory }).readMessages('older-1', 'main')).length;
    // The turn after runs on replica 1; mid-turn, the client reconnects there with its old id.
    const third = await oneApi.call(
      'POST',
      '/sessions/older-1/messages',
      { text: 'one more time' },
      { accept: 'text/event-stream' },
    );
    let reconnect: ReceivedEvent[] | undefined;
    for await (const event of sseMessages(third)) {
      if (event.event === 'message.delta' && reconnect === undefined)
        reconnect = (await oneApi.stream('GET', '/sessions/older-1/events', undefined, { 'last-event-id': lastSeen }))
          .events;
    }
    const stored = await new FileStore({ directory }).readMessages('older-1', 'main');
    const firstTurn = first.events.filter((e) => e.event === 'message').map((e) => e.data.message.id);
    const missed = stored.filter((m) => !firstTurn.includes(m.id)).map((m) => m.id);
    expect(missed.length).toBeGreaterThan(stored.length - seenBefore); // replica 2's turn is among them
    const shown = reconnect!.filter((e) => e.event === 'message').map((e) => e.data.message.id);
    expect(shown).toEqual(missed);
    expect(new Set(reconnect!.map((e) => e.id)).size).toBe(reconnect!.length);
  }, 120_000);
});
