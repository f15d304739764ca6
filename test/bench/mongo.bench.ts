/**
 * MongoStore turn throughput: 50 concurrent sessions × 40 turns, each turn = append 2 messages,
 * save 1 checkpoint, update the session with compare-and-set. Beside it, a baseline that sends the
 * same writes with the raw driver and no Baton (same indexes, same document sizes). Prints turns
 * per second, round trips per turn (commands counted with `commandStarted`) and the ratio.
 *
 * Runs against MONGODB_URL or the FerretDB that test/support/mongoGlobalSetup.ts starts. On
 * FerretDB, MongoStore claims each version before an update (its conditional updates are not
 * atomic), so the default mode costs one more round trip; the `versionClaims: false` row shows the
 * MongoDB path (one atomic findAndModify), safe here because each session has a single writer.
 *
 *   npx vitest bench --run --project @baton/test test/bench/mongo.bench.ts
 */
import { performance } from 'node:perf_hooks';
import type { Checkpoint, Message } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { MongoClient } from 'mongodb';
import { afterAll, bench, describe } from 'vitest';
import { makeCheckpoint, makeMessage, uniqueId } from '../conformance/fixtures.js';
import { testDatabaseName } from '../support/mongoServer.js';
import { mongoTestUrl } from '../support/mongoTestUrl.js';

const SESSIONS = 50;
const TURNS = 40;

interface Figures {
  turnsPerSecond: number[];
  roundTripsPerTurn: number;
}
const figures = new Map<string, Figures>();
const databases: string[] = [];

/** One turn's writes, however they are sent. */
type TurnWriter = (sessionId: string, turn: number, messages: Message[], checkpoint: Checkpoint, change: { lastActivityAt: string; metadata: { turn: number } }) => Promise<void>;

/** Opens a monitored client; `commands()` counts the commands sent to `dbName` since the last reset. */
function monitoredClient(dbName: string): { client: MongoClient; commands: () => number; reset: () => void } {
  const client = new MongoClient(mongoTestUrl(), { monitorCommands: true, maxPoolSize: SESSIONS + 10 });
  let count = 0;
  client.on('commandStarted', (event) => {
    if (event.databaseName === dbName) count += 1;
  });
  return { client, commands: () => count, reset: () => (count = 0) };
}

/** Creates the sessions with `create`, then runs SESSIONS concurrent sessions of TURNS turns and records the figures. */
async function runTurns(name: string, create: (id: string) => Promise<void>, write: TurnWriter, monitor: { commands: () => number; reset: () => void }): Promise<void> {
  const ids = Array.from({ length: SESSIONS }, () => uniqueId('bench'));
  for (const id of ids) await create(id);
  monitor.reset();
  const start = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      for (let turn = 1; turn <= TURNS; turn += 1) {
        const messages = [makeMessage(2 * turn - 1), makeMessage(2 * turn)];
        const checkpoint = makeCheckpoint({ sessionId: id, step: turn, throughSeq: 2 * turn });
        await write(id, turn, messages, checkpoint, { lastActivityAt: new Date().toISOString(), metadata: { turn } });
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const entry = figures.get(name) ?? { turnsPerSecond: [], roundTripsPerTurn: 0 };
  entry.turnsPerSecond.push((SESSIONS * TURNS) / seconds);
  entry.roundTripsPerTurn = monitor.commands() / (SESSIONS * TURNS);
  figures.set(name, entry);
}

/** MongoStore with the given update mode: one run of SESSIONS × TURNS. */
async function runMongoStore(name: string, versionClaims: 'auto' | boolean): Promise<void> {
  const dbName = testDatabaseName('bench_baton');
  databases.push(dbName);
  const monitor = monitoredClient(dbName);
  const store = new MongoStore({ client: monitor.client }, { dbName, versionClaims });
  await store.init();
  await runTurns(
    name,
    async (id) => void (await store.createSession({ id })),
    async (id, turn, messages, checkpoint, change) => {
      await store.appendMessages(id, 'main', messages);
      await store.saveCheckpoint(checkpoint);
      await store.updateSession(id, change, { expectedVersion: turn });
    },
    monitor,
  );
  await store.close();
  await monitor.client.close();
}

/** The same writes with the raw driver: one run of SESSIONS × TURNS. */
async function runRawDriver(): Promise<void> {
  const dbName = testDatabaseName('bench_raw');
  databases.push(dbName);
  const monitor = monitoredClient(dbName);
  // The same indexes as MongoStore's (created untimed), so both pay the same index upkeep.
  const indexes = new MongoStore({ client: monitor.client }, { dbName });
  await indexes.init();
  const db = monitor.client.db(dbName);
  type Doc = { _id: string; [field: string]: unknown };
  interface SessionRow {
    _id: string;
    id: string;
    status: string;
    createdAt: string;
    lastActivityAt: string;
    metadata: Record<string, unknown>;
    state: Record<string, unknown>;
    version: number;
  }
  const sessions = db.collection<SessionRow>('baton_sessions');
  const messagesOf = db.collection<Doc>('baton_messages');
  const checkpoints = db.collection<Doc>('baton_checkpoints');
  await runTurns(
    RAW,
    async (id) => {
      const now = new Date().toISOString();
      await sessions.insertOne({ _id: id, id, status: 'active', createdAt: now, lastActivityAt: now, metadata: {}, state: {}, version: 1 });
    },
    async (id, turn, messages, checkpoint, change) => {
      await messagesOf.insertMany(
        messages.map((m) => ({ ...m, _id: `${id}/main/${m.seq}`, sessionId: id, branchId: 'main' })),
        { ordered: false },
      );
      await checkpoints.insertOne({ _id: `${id}/main/${checkpoint.id}`, sessionId: id, branchId: 'main', id: checkpoint.id, createdAt: checkpoint.createdAt, body: JSON.stringify(checkpoint) });
      const updated = await sessions.findOneAndUpdate({ _id: id, version: turn }, { $set: change, $inc: { version: 1 } }, { returnDocument: 'after' });
      if (updated === null) throw new Error(`raw update of ${id} at version ${turn} matched nothing`);
    },
    monitor,
  );
  await monitor.client.close();
}

const RAW = 'raw driver';
const DEFAULT = 'MongoStore (default)';
const NO_CLAIMS = 'MongoStore (versionClaims: false)';

describe('MongoStore turns', () => {
  bench(
    `${SESSIONS} sessions × ${TURNS} turns: raw driver and MongoStore, interleaved`,
    async () => {
      // Interleaved, so that a change in the machine's load hits every variant alike.
      await runRawDriver();
      await runMongoStore(DEFAULT, 'auto');
      await runMongoStore(NO_CLAIMS, false);
      await runMongoStore(DEFAULT, 'auto');
      await runRawDriver();
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 },
  );
});

afterAll(async () => {
  const best = (name: string) => Math.max(...(figures.get(name)?.turnsPerSecond ?? [0]));
  const raw = best(RAW);
  console.log(`\nMongoDB turns (${SESSIONS} concurrent sessions × ${TURNS} turns; turn = 2 messages + 1 checkpoint + 1 session update; best of the interleaved runs)`);
  for (const [name, entry] of figures) {
    const rate = best(name);
    const ratio = name === RAW ? '' : `  ${(raw / rate).toFixed(2)}× the raw driver's time`;
    console.log(`  ${name.padEnd(36)} ${rate.toFixed(0).padStart(6)} turns/s  ${entry.roundTripsPerTurn.toFixed(2)} round trips/turn${ratio}`);
  }
  const client = new MongoClient(mongoTestUrl());
  for (const dbName of databases) await client.db(dbName).dropDatabase();
  await client.close();
});
