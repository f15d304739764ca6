/**
 * Connection loss: turns run while the server is stopped and restarted under them. Every turn
 * either completes or fails with a StoreError; failed turns are retried as they are (the writes are
 * idempotent), and in the end every message is there exactly once.
 *
 * This test stops its server, so it always starts a private FerretDB, even when MONGODB_URL is set.
 */
import { type Message, StoreError } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint, makeMessage } from '../../../test/conformance/fixtures.js';
import { type MongoServer, startMongoServer } from '../../../test/support/mongoServer.js';
import type { MongoStore } from '../src/index.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

const TURNS = 24;
/**
 * Turns in which the server is stopped (and restarted 1.5 s later, while the turns go on): at
 * turn 5 just after the append, at turn 15 just after the checkpoint, so the retries repeat writes
 * that already landed.
 */
const OUTAGES = new Map<number, 'append' | 'checkpoint'>([
  [5, 'append'],
  [15, 'checkpoint'],
]);
/** A pause before each turn, so that an outage spans several turns. */
const PACE_MS = 50;

describe('MongoStore connection loss', () => {
  let server: MongoServer;
  let test: TestMongoStore;

  beforeAll(async () => {
    server = await startMongoServer();
    test = await createTestMongoStore('connloss', { serverSelectionTimeoutMS: 1_000 }, server.url);
  });

  afterAll(async () => {
    await test?.store.close();
    await server?.close();
  });

  // About 11 s on an idle machine, most of it waiting for the two outages (1.5 s each, then a restart that
  // waits for a ping) and the retries behind them; the restarts and the retries' server selection (1 s
  // each) slow down with the machine, so the test gets more than the default 30 s.
  it('loses and duplicates nothing when the server goes away mid-turn and comes back', {
    timeout: 120_000,
  }, async () => {
    const { store } = test;
    const session = await store.createSession({ id: `connloss-${Date.now()}` });
    const expected: Message[] = [];
    const failures: unknown[] = [];
    let outage: Promise<void> = Promise.resolve();

    for (let turn = 1; turn <= TURNS; turn += 1) {
      const messages = [makeMessage(2 * turn - 1), makeMessage(2 * turn)];
      expected.push(...messages);
      const checkpoint = makeCheckpoint({ sessionId: session.id, step: turn, throughSeq: 2 * turn });
      const change = { lastActivityAt: new Date(Date.UTC(2025, 0, 1, 0, turn)).toISOString(), metadata: { turn } };
      let stopAfter = OUTAGES.get(turn);
      const maybeStop = async (step: 'append' | 'checkpoint'): Promise<void> => {
        if (stopAfter !== step) return;
        stopAfter = undefined;
        await outage;
        await server.stop();
        outage = new Promise((resolve) => setTimeout(resolve, 1_500)).then(() => server.restart());
      };
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
      const runTurn = async (): Promise<void> => {
        await store.appendMessages(session.id, 'main', messages);
        await maybeStop('append');
        await store.saveCheckpoint(checkpoint);
        await maybeStop('checkpoint');
        await store.updateSession(session.id, change, { expectedVersion: turn });
      };
      for (let attempt = 1; ; attempt += 1) {
        try {
          await runTurn();
          break;
        } catch (error) {
          failures.push(error);
          expect(error, `turn ${turn} attempt ${attempt} failed with ${String(error)}`).toBeInstanceOf(StoreError);
          expect(attempt, `turn ${turn} kept failing`).toBeLessThan(40);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
    }
    await outage;

    const messagesOf = failures.map((f) => (f as Error).message);
    expect(
      messagesOf.some((m) => m.includes('could not save a checkpoint')),
      'no checkpoint save was interrupted',
    ).toBe(true);
    expect(
      messagesOf.some((m) => m.includes('could not update a session')),
      'no session update was interrupted',
    ).toBe(true);
    expect(messagesOf.every((m) => m.includes('unreachable or the connection was lost'))).toBe(true);
    const read = await store.readMessages(session.id, 'main');
    expect(read.map((m) => m.seq)).toEqual(expected.map((m) => m.seq));
    expect(read).toEqual(expected);
    const stored = await store.getSession(session.id);
    expect(stored).toMatchObject({ version: TURNS + 1, metadata: { turn: TURNS } });
    expect((await store.listCheckpoints(session.id, 'main')).map((c) => c.step)).toEqual(
      Array.from({ length: TURNS }, (_, i) => i + 1),
    );
    expect(await countDocuments(store, session.id)).toBe(2 * TURNS);
  });
});

/** Messages stored for the session, counted by the server (not through the store's read path). */
function countDocuments(store: MongoStore, sessionId: string): Promise<number> {
  return store.collections.messages.countDocuments({ sessionId });
}
