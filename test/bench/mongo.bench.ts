/**
 * MongoStore turn throughput: 50 concurrent sessions × 40 turns, each turn = append 2 messages,
 * save 1 checkpoint, update the session with compare-and-set. Beside it, a baseline that sends the
 * same writes with the raw driver and no Baton (same indexes, same messages, same checkpoint JSON).
 * Prints, per variant, the median turns per second over several rounds (min–max beside it), round
 * trips per turn (commands counted with `commandStarted`), this process's CPU time per turn, and the
 * ratio to the raw driver: of the medians, and the median of each round's paired ratio.
 *
 * The machine is shared, so the variants run interleaved: every round runs each variant once, in
 * an order rotated from round to round, and each run gets a fresh database that is dropped right
 * after it (so no run pays for an earlier one's data). The load average is printed before and after.
 *
 * Runs against MONGODB_URL or the FerretDB that test/support/mongoGlobalSetup.ts starts. On
 * FerretDB, MongoStore claims each version before an update (its conditional updates are not
 * atomic), so the default mode costs one more round trip; the `versionClaims: false` row shows the
 * MongoDB path (one atomic findAndModify), safe here because each session has a single writer.
 * `BENCH_ROUNDS` sets the number of rounds (default 3, about 100 s on 2 cores).
 *
 *   npx vitest bench --run --project @baton/test test/bench/mongo.bench.ts
 */
import { loadavg } from 'node:os';
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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** One run's figures. */
interface Run {
  turnsPerSecond: number;
  roundTripsPerTurn: number;
  /** This process's CPU time (user + system) per turn, in ms: the client's share of the work. */
  cpuMsPerTurn: number;
}
/** Runs by variant name, and by round. */
const runs = new Map<string, Run[]>();
const loads: string[] = [];

/** One turn's writes, however they are sent. */
type TurnWriter = (
  sessionId: string,
  turn: number,
  messages: Message[],
  checkpoint: Checkpoint,
  change: { lastActivityAt: string; metadata: { turn: number } },
) => Promise<void>;

/** A variant: sets itself up on `client`/`dbName` and returns how to create a session and write a turn. */
type Variant = (
  client: MongoClient,
  dbName: string,
) => Promise<{ create: (id: string) => Promise<void>; write: TurnWriter; close: () => Promise<void> }>;

/** MongoStore with the given update mode. */
const mongoStore =
  (versionClaims: 'auto' | boolean): Variant =>
  async (client, dbName) => {
    const store = new MongoStore({ client }, { dbName, versionClaims });
    await store.init();
    return {
      create: async (id) => void (await store.createSession({ id })),
      write: async (id, turn, messages, checkpoint, change) => {
        await store.appendMessages(id, 'main', messages);
        await store.saveCheckpoint(checkpoint);
        await store.updateSession(id, change, { expectedVersion: turn });
      },
      close: () => store.close(),
    };
  };

/** The same writes with the raw driver, on the same indexes (created untimed by a MongoStore). */
const rawDriver: Variant = async (client, dbName) => {
  const indexes = new MongoStore({ client }, { dbName });
  await indexes.init();
  const db = client.db(dbName);
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
  return {
    create: async (id) => {
      const now = new Date().toISOString();
      await sessions.insertOne({
        _id: id,
        id,
        status: 'active',
        createdAt: now,
        lastActivityAt: now,
        metadata: {},
        state: {},
        version: 1,
      });
    },
    write: async (id, turn, messages, checkpoint, change) => {
      await messagesOf.insertMany(
        messages.map((m) => ({ ...m, _id: `${id}/main/${m.seq}`, sessionId: id, branchId: 'main' })),
        { ordered: false },
      );
      await checkpoints.insertOne({
        _id: `${id}/main/${checkpoint.id}`,
        sessionId: id,
        branchId: 'main',
        id: checkpoint.id,
        createdAt: checkpoint.createdAt,
        body: JSON.stringify(checkpoint),
      });
      const updated = await sessions.findOneAndUpdate(
        { _id: id, version: turn },
        { $set: change, $inc: { version: 1 } },
        { returnDocument: 'after' },
      );
      if (updated === null) throw new Error(`raw update of ${id} at version ${turn} matched nothing`);
    },
    close: async () => {},
  };
};

const RAW = 'raw driver';
const VARIANTS: [string, Variant][] = [
  [RAW, rawDriver],
  ['MongoStore (default)', mongoStore('auto')],
  ['MongoStore (versionClaims: false)', mongoStore(false)],
];

/** One run of SESSIONS × TURNS on a fresh database (dropped afterwards), recorded under `name`. */
async function runVariant(name: string, variant: Variant): Promise<void> {
  const dbName = testDatabaseName('bench_turns');
  const client = new MongoClient(mongoTestUrl(), { monitorCommands: true, maxPoolSize: SESSIONS + 10 });
  let commands = 0;
  client.on('commandStarted', (event) => {
    if (event.databaseName === dbName) commands += 1;
  });
  try {
    const { create, write, close } = await variant(client, dbName);
    const ids = Array.from({ length: SESSIONS }, () => uniqueId('bench'));
    for (const id of ids) await create(id);
    commands = 0;
    const cpuBefore = process.cpuUsage();
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
    const cpu = process.cpuUsage(cpuBefore);
    const turns = SESSIONS * TURNS;
    const list = runs.get(name) ?? [];
    list.push({
      turnsPerSecond: turns / seconds,
      roundTripsPerTurn: commands / turns,
      cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / turns,
    });
    runs.set(name, list);
    await close();
  } finally {
    await client.db(dbName).dropDatabase();
    await client.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

function load(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

describe('MongoStore turns', () => {
  bench(
    `${SESSIONS} sessions × ${TURNS} turns: raw driver and MongoStore, ${ROUNDS} interleaved rounds`,
    async () => {
      loads.push(load());
      for (let round = 0; round < ROUNDS; round += 1) {
        // Rotate the order, so that no variant always runs first (or right after another).
        for (let index = 0; index < VARIANTS.length; index += 1) {
          const [name, variant] = VARIANTS[(round + index) % VARIANTS.length] as [string, Variant];
          await runVariant(name, variant);
        }
      }
      loads.push(load());
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 },
  );
});

afterAll(() => {
  const raw = runs.get(RAW) ?? [];
  const rawMedian = median(raw.map((r) => r.turnsPerSecond));
  console.log(
    `\nMongoDB turns (${SESSIONS} concurrent sessions × ${TURNS} turns; turn = 2 messages + 1 checkpoint + 1 session update; ${ROUNDS} rounds, variants interleaved)`,
  );
  console.log(`  load average (1, 5, 15 min): ${loads[0] ?? '?'} before, ${loads[1] ?? '?'} after`);
  for (const [name, list] of runs) {
    const rates = list.map((r) => r.turnsPerSecond);
    const rate = median(rates);
    const range = `${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}`;
    const trips = median(list.map((r) => r.roundTripsPerTurn)).toFixed(2);
    const cpu = median(list.map((r) => r.cpuMsPerTurn)).toFixed(2);
    let ratio = '';
    if (name !== RAW) {
      const paired = list.map((r, round) => (raw[round]?.turnsPerSecond ?? Number.NaN) / r.turnsPerSecond);
      ratio = `  ${(rawMedian / rate).toFixed(2)}× the raw driver's time (paired per round: median ${median(paired).toFixed(2)}×, ${paired.map((p) => p.toFixed(2)).join(' ')})`;
    }
    console.log(
      `  ${name.padEnd(34)} ${rate.toFixed(0).padStart(5)} turns/s (${range})  ${trips} round trips/turn  ${cpu} ms CPU/turn here${ratio}`,
    );
  }
});
