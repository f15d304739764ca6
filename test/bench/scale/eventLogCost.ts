/**
 * The event log's cost per turn (`pnpm bench:scale --only eventlog`): the scale desk's turns sent
 * through `@baton/server` (in process, `app.request`) on a FileStore in a temp dir and on a MongoStore
 * on the run's FerretDB, one session after another. Per turn: the event-log writes (`appendEvents`
 * calls: one fdatasync'd append on FileStore, one insert on MongoStore) and their JSON bytes, the
 * event-log reads and prunes and the branch-lease calls, beside the turn's other store calls; on
 * MongoStore also the round trips (commands, by command monitoring) per collection group and the
 * BSON bytes of the event-log inserts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, type Store } from '@baton/core';
import { createBatonApp } from '@baton/server';
import { MongoStore } from '@baton/store-mongo';
import { BSON, MongoClient } from 'mongodb';
import { countStoreCalls } from './countedStore.js';
import { scaleDesk } from './scaleDesk.js';

/** One store's figures, per turn. */
export interface EventLogCost {
  store: 'FileStore' | 'MongoStore';
  modelLatencyMs: number;
  turns: number;
  events: number;
  /** `appendEvents` calls and the JSON bytes of their entries. */
  logWrites: number;
  logBytes: number;
  /** `readEvents` + `pruneEvents` calls. */
  logOther: number;
  /** Branch-lease calls (acquire, renew, release, get). */
  leaseCalls: number;
  /** Every other store call (the turn's own reads and writes). */
  otherCalls: number;
  /** MongoStore only: commands per turn to the event log, to the leases, to everything else; BSON bytes of the log's inserts. */
  mongo?: { logTrips: number; leaseTrips: number; otherTrips: number; logInsertBytes: number };
}

const LOG_METHODS = new Set(['readEvents', 'pruneEvents']);
const isLeaseMethod = (name: string) => name.endsWith('BranchLease') || name === 'listExpiredLeases';

/** Runs `turns` turns (over 5 sessions) on `store` through the server and counts what they cost. */
async function measureOn(
  name: EventLogCost['store'],
  store: Store,
  turns: number,
  modelLatencyMs: number,
  trips?: { counts: Record<string, number>; bytes: { log: number }; reset(): void },
  probe: Store = store,
): Promise<EventLogCost> {
  const counted = countStoreCalls(store);
  const app = createBatonApp({ workflow: scaleDesk(counted.store, modelLatencyMs) });
  const post = (path: string, body: unknown) =>
    app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const sessions = Array.from({ length: 5 }, (_, i) => `cost-${modelLatencyMs}-${i}`);
  for (const id of sessions) await post('/sessions', { id });
  // One warm-up turn per session, then the counters start from zero.
  const send = async (id: string, text: string) => {
    const answer = await post(`/sessions/${id}/messages`, { text });
    if (answer.status !== 200) throw new Error(`turn on ${id}: ${answer.status} ${await answer.text()}`);
    // The run ends (its log written, its lease released) just after the answer; `probe` is not counted.
    while ((await probe.getBranchLease!(id, 'main'))?.held === true) await new Promise((r) => setTimeout(r, 5));
  };
  for (const id of sessions) await send(id, 'warm-up');
  counted.reset();
  trips?.reset();
  for (let t = 0; t < turns; t++) await send(sessions[t % sessions.length]!, `turn ${t}`);
  const calls = counted.counts.calls;
  const sum = (names: string[]) => names.reduce((n, key) => n + (calls[key] ?? 0), 0);
  const all = Object.keys(calls);
  const leaseCalls = sum(all.filter(isLeaseMethod));
  const logOther = sum(all.filter((key) => LOG_METHODS.has(key)));
  const logWrites = calls.appendEvents ?? 0;
  return {
    store: name,
    modelLatencyMs,
    turns,
    events: counted.counts.eventEntries / turns,
    logWrites: logWrites / turns,
    logBytes: counted.counts.eventBytes / turns,
    logOther: logOther / turns,
    leaseCalls: leaseCalls / turns,
    otherCalls: (sum(all) - logWrites - logOther - leaseCalls) / turns,
    ...(trips === undefined
      ? {}
      : {
          mongo: {
            logTrips: (trips.counts.log ?? 0) / turns,
            leaseTrips: (trips.counts.lease ?? 0) / turns,
            otherTrips: (trips.counts.other ?? 0) / turns,
            logInsertBytes: trips.bytes.log / turns,
          },
        }),
  };
}

/**
 * Measures the event log's cost per turn on FileStore and on MongoStore at `mongoUrl`, with instant
 * models and with models that wait `latencyMs` per call.
 */
export async function measureEventLogCost(mongoUrl: string, turns: number, latencyMs = 300): Promise<EventLogCost[]> {
  const results: EventLogCost[] = [];
  for (const modelLatencyMs of [0, latencyMs]) {
    const directory = await mkdtemp(join(tmpdir(), 'baton-eventlog-cost-'));
    const file = new FileStore({ directory });
    try {
      results.push(await measureOn('FileStore', file, turns, modelLatencyMs));
    } finally {
      await file.close();
      await rm(directory, { recursive: true, force: true });
    }
    const client = new MongoClient(mongoUrl, { monitorCommands: true });
    const trips = {
      counts: {} as Record<string, number>,
      bytes: { log: 0 },
      reset() {
        trips.counts = {};
        trips.bytes.log = 0;
      },
    };
    client.on('commandStarted', (event) => {
      const collection = String(event.command[event.commandName] ?? '');
      const group = collection.endsWith('eventLog') ? 'log' : collection.endsWith('branchLeases') ? 'lease' : 'other';
      trips.counts[group] = (trips.counts[group] ?? 0) + 1;
      if (group === 'log' && event.commandName === 'insert') trips.bytes.log += BSON.calculateObjectSize(event.command);
    });
    await client.connect();
    const dbName = `baton_eventlog_${Math.random().toString(36).slice(2, 8)}`;
    const mongo = new MongoStore({ client }, { dbName });
    const probe = new MongoStore({ url: mongoUrl }, { dbName });
    try {
      await mongo.init();
      results.push(await measureOn('MongoStore', mongo, turns, modelLatencyMs, trips, probe));
    } finally {
      await probe.close();
      await mongo.close();
      await client.close();
    }
  }
  return results;
}

/** The figures as a Markdown table. */
export function eventLogCostLines(results: readonly EventLogCost[]): string[] {
  const f = (n: number) => n.toFixed(2);
  return [
    '| store | model latency | events per turn | event-log writes per turn | their JSON bytes | event-log reads + prunes | lease calls | other store calls | MongoDB round trips: event log / leases / rest (BSON bytes of log inserts) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.store} | ${r.modelLatencyMs} ms | ${f(r.events)} | ${f(r.logWrites)} | ${r.logBytes.toFixed(0)} | ${f(r.logOther)} | ${f(r.leaseCalls)} | ${f(r.otherCalls)} | ${
          r.mongo === undefined
            ? '–'
            : `${f(r.mongo.logTrips)} / ${f(r.mongo.leaseTrips)} / ${f(r.mongo.otherTrips)} (${r.mongo.logInsertBytes.toFixed(0)})`
        } |`,
    ),
  ];
}
