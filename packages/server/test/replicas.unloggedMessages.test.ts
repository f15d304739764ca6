/**
 * A replica killed after it stored a turn's messages but before their events reached the store's
 * event log (the log is written behind the turn): the run that takes the branch over (the reconciler,
 * or the next send) logs those messages first, so a client that follows with the dead run's last
 * event id gets every stored message (found by `pnpm chaos --replicas 2`, seed 3).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatonApp, resumeCutTurns } from '../src/index.js';
import { serveBaton } from '../src/node.js';
import { client } from './support/httpClient.js';
import { serverDesk } from './support/serverDesk.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const directories: string[] = [];
afterEach(async () => {
  await Promise.all(directories.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A branch whose run stored its messages and logged only its first event, then died holding the lease. */
async function cutAfterStoring(id: string, options: { loggedFirst?: boolean; cutTurnWaitMs?: number } = {}) {
  const directory = await mkdtemp(join(tmpdir(), 'baton-unlogged-'));
  directories.push(directory);
  const store = new FileStore({ directory });
  const { workflow } = serverDesk(store);
  const served = await serveBaton(
    createBatonApp({ workflow, events: { leaseTtlMs: 50, pollMs: 10, cutTurnWaitMs: options.cutTurnWaitMs ?? 0 } }),
  );
  const api = client(served.url);
  expect((await api.json('POST', '/sessions', { id })).status).toBe(201);
  // The dead replica: its lease, the one event it logged, the messages it stored.
  const taken = await store.acquireBranchLease(id, 'main', { owner: 'dead-replica', ttlMs: 40 });
  expect(taken).toMatchObject({ acquired: true, lease: { epoch: 1 } });
  const started = { type: 'turn.started' as const, sessionId: id, branchId: 'main', turn: 1 };
  if (options.loggedFirst !== false)
    await store.appendEvents(id, 'main', [{ position: { epoch: 1, seq: 0, index: 1 }, event: started }]);
  const session = await workflow.session({ id });
  for await (const _ of session.send('I was charged twice')) {
    // the dead run's events, never logged
  }
  await sleep(60); // its lease expires, still held
  const messageIds = async () => (await store.readMessages(id, 'main')).map((m) => m.id);
  const lastSeen = options.loggedFirst === false ? `${id}/main/0.0` : `${id}/main/1:0.1`;
  const shown = async () =>
    (await api.stream('GET', `/sessions/${id}/events`, undefined, { 'last-event-id': lastSeen })).events;
  return { store, workflow, api, served, messageIds, shown };
}

describe('messages a killed replica stored but never logged', () => {
  it('are logged by the reconciler that takes the branch over: a client following from the dead run sees each once', async () => {
    const cut = await cutAfterStoring('unlogged-1');
    try {
      const stored = await cut.messageIds();
      expect(stored.length).toBeGreaterThanOrEqual(3);
      expect(await resumeCutTurns({ workflow: cut.workflow })).toEqual([
        { sessionId: 'unlogged-1', branchId: 'main', outcome: 'nothing' },
      ]);
      const events = await cut.shown();
      const messages = events.filter((e) => e.event === 'message');
      expect(messages.map((e) => e.data.message.id)).toEqual(stored);
      expect(messages.map((e) => e.id)).toEqual(stored.map((_, i) => `unlogged-1/main/2:${i + 1}.0`));
    } finally {
      await cut.served.close();
    }
  });

  it('are logged by the next send that takes the expired lease, before that turn, and open its stream', async () => {
    const cut = await cutAfterStoring('unlogged-2');
    try {
      const before = await cut.messageIds();
      const sent = await cut.api.stream('POST', '/sessions/unlogged-2/messages', { text: '1234' });
      expect(sent.status).toBe(200);
      // The sender's own stream starts with them: a client whose cursor moves on with this turn misses nothing.
      const sentIds = sent.events.filter((e) => e.event === 'message').map((e) => e.data.message.id);
      expect(sentIds.slice(0, before.length)).toEqual(before);
      const events = await cut.shown();
      const shownIds = events.filter((e) => e.event === 'message').map((e) => e.data.message.id);
      expect(shownIds).toEqual(await cut.messageIds());
      expect(shownIds.slice(0, before.length)).toEqual(before);
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    } finally {
      await cut.served.close();
    }
  });

  it('a client following the cut turn waits for its takeover by another process, and sees its messages', async () => {
    const cut = await cutAfterStoring('unlogged-4', { cutTurnWaitMs: 60_000 });
    try {
      const following = cut.shown();
      await sleep(150); // the follower polls the expired lease meanwhile
      expect(await resumeCutTurns({ workflow: cut.workflow })).toEqual([
        { sessionId: 'unlogged-4', branchId: 'main', outcome: 'nothing' },
      ]);
      // The stream ends at the takeover's release, long before the wait of 60 s.
      const events = await following;
      expect(events.filter((e) => e.event === 'message').map((e) => e.data.message.id)).toEqual(await cut.messageIds());
    } finally {
      await cut.served.close();
    }
  });

  it('without a wait, a follower of a cut turn is told at once that nothing runs (the stream ends)', async () => {
    const cut = await cutAfterStoring('unlogged-5');
    try {
      const events = await cut.shown();
      expect(events.filter((e) => e.event === 'message')).toEqual([]);
    } finally {
      await cut.served.close();
    }
  });

  it('a log that begins with stored messages (index 0) shows each once to a client from before it', async () => {
    const cut = await cutAfterStoring('unlogged-3', { loggedFirst: false });
    try {
      const stored = await cut.store.readMessages('unlogged-3', 'main');
      const entries = stored.map((message) => ({
        position: { epoch: 1, seq: message.seq, index: 0 },
        event: { type: 'message' as const, sessionId: 'unlogged-3', branchId: 'main', message },
      }));
      await cut.store.appendEvents('unlogged-3', 'main', entries);
      const events = await cut.shown();
      expect(events.filter((e) => e.event === 'message').map((e) => e.data.message.id)).toEqual(
        stored.map((m) => m.id),
      );
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    } finally {
      await cut.served.close();
    }
  });
});
