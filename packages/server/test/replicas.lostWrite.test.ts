/**
 * A run whose write loses to messages it never loaded (another process stored them meanwhile: a
 * replica whose lease expired under it while it still ran, found by `pnpm chaos --replicas 2`, seed
 * 1029): the run ends with its `error` event, and before its stream ends it sends the messages the
 * branch now holds that it did not send, so its clients (and followers of the store's log) see what
 * the branch really holds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatonApp } from '../src/index.js';
import { serveBaton } from '../src/node.js';
import { client, type ReceivedEvent, sseMessages } from './support/httpClient.js';
import { createGate, serverDesk, until } from './support/serverDesk.js';

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(directories.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('a run whose write loses to messages another process stored', () => {
  it('ends with its error and then sends the stored messages it did not send', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-lost-write-'));
    directories.push(directory);
    const store = new FileStore({ directory });
    const gate = createGate();
    gate.close();
    const { workflow } = serverDesk(store, { gate: gate.wait });
    const served = await serveBaton(createBatonApp({ workflow, events: { pollMs: 10 } }));
    try {
      const api = client(served.url);
      expect((await api.json('POST', '/sessions', { id: 'lost-1' })).status).toBe(201);
      const turn = await api.call(
        'POST',
        '/sessions/lost-1/messages',
        { text: 'I was charged twice' },
        { accept: 'text/event-stream' },
      );
      const events: ReceivedEvent[] = [];
      const reading = (async () => {
        for await (const event of sseMessages(turn)) events.push(event);
      })();
      await until(() => gate.waiting > 0); // billing's model call is held mid-turn
      // Another process (no lease: its own lapsed under it) stores a turn on the branch meanwhile.
      const elsewhere = serverDesk(new FileStore({ directory })).workflow;
      const session = await elsewhere.session({ id: 'lost-1' });
      for await (const _ of session.send('a message sent elsewhere')) {
        // stored by the other process
      }
      gate.open();
      await reading;
      expect(events.some((e) => e.event === 'error')).toBe(true);
      const stored = await store.readMessages('lost-1', 'main');
      expect(stored.some((m) => m.content === 'a message sent elsewhere')).toBe(true);
      const sent = events.filter((e) => e.event === 'message').map((e) => e.data.message.id);
      for (const message of stored) expect(sent, `message ${message.seq} (${message.role})`).toContain(message.id);
      // A follower of the store's log from the start sees them too.
      const followed = await api.stream('GET', '/sessions/lost-1/events', undefined, {
        'last-event-id': 'lost-1/main/0.0',
      });
      const shown = followed.events.filter((e) => e.event === 'message').map((e) => e.data.message.id);
      for (const message of stored) expect(shown).toContain(message.id);
    } finally {
      await served.close();
    }
  });
});
