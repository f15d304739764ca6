/**
 * Scale-out, latency-bound: 1, 2 and 4 worker processes, each running at most 8 turns at once (as a
 * real pool caps them), each model call taking 300 ms, so a worker's slots, not this machine's
 * cores, bound what it serves. Two kinds of pool in the same run, on the same store, desk and
 * customers (workerPools.ts): Baton Temporal workers (`createBatonWorker`, each turn an Update of
 * the session workflow and an activity on any worker) and test/bench/scale's in-process MongoStore
 * workers behind a least-loaded balancer. Configurations alternate (Temporal then in-process at one
 * worker count, in-process then Temporal at the next, …) so that the machine's load drifts over
 * both alike.
 *
 * Each customer sends a warm-up turn, then `--turns` timed turns one after the other (sessionLoad.ts).
 * Prints per configuration: turns/s, p50/p99 turn latency as the customer saw it, CPU per turn of the
 * workers (utime + stime of their processes, threads included: what `process.cpuUsage()` reports in
 * each) and of the servers (the Temporal dev server, FerretDB), cores used, and the speed-up over
 * 1 worker; then reads every session back and checks its history (test/bench/scale/historyCheck.ts:
 * every turn stored once, whole, in order).
 *
 * Store: MongoStore on a FerretDB started for the run, on SQLite as the tests start it (`--backend pg`:
 * on a throwaway PostgreSQL of its own, see test/support/postgresServer.ts); MONGODB_URL overrides both;
 * Temporal: a `temporal server start-dev` started for the run.
 *
 * Run: pnpm bench:scale:temporal [--quick] [--workers 1,2,4] [--sessions 32] [--turns 5] [--latency 300]
 *   [--per-worker 8] [--runners temporal,mongo] [--backend sqlite|pg] [--server-arg <start-dev flag>]…
 * (--quick: 1 and 2 workers, 8 sessions, 2 turns: a smoke test of the whole path.)
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MongoStore } from '@baton/store-mongo';
import { bundleBatonWorkflows } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { checkHistory, isClean } from '../../../test/bench/scale/historyCheck.js';
import { type CpuSample, sampleCpu } from '../../../test/bench/scale/processCpu.js';
import { answerTo } from '../../../test/bench/scale/scaleDesk.js';
import { type MongoServer, startMongoServer } from '../../../test/support/mongoServer.js';
import { type PostgresServer, startPostgres } from '../../../test/support/postgresServer.js';
import { startTemporalServer } from '../test/support/temporalServer.js';
import { type LoadResult, percentile, runSessions } from './sessionLoad.js';
import { type PoolSettings, startMongoPool, startTemporalPool, type WorkerPool } from './workerPools.js';

type Runner = 'temporal' | 'mongo';

/** One measured configuration. */
interface Outcome {
  runner: Runner;
  workers: number;
  load: LoadResult;
  /** CPU seconds during the timed turns, by process group. */
  cpu: { workers: CpuSample; temporal?: CpuSample; ferretdb?: CpuSample; postgres?: CpuSample; driver: CpuSample };
  lost: number;
  duplicated: number;
  interleaved: number;
  /** Temporal: workflow tasks completed after their 10 s timeout (retried; a starved worker or server). */
  lateWorkflowTasks?: number;
  /** Temporal: turn activity attempts after the first. */
  retriedAttempts?: number;
}

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    workers: { type: 'string' },
    sessions: { type: 'string' },
    turns: { type: 'string' },
    latency: { type: 'string', default: '300' },
    'per-worker': { type: 'string', default: '8' },
    runners: { type: 'string', default: 'temporal,mongo' },
    'server-arg': { type: 'string', multiple: true },
    backend: { type: 'string', default: 'sqlite' },
  },
});
const quick = values.quick;
const workerCounts = (values.workers ?? (quick ? '1,2' : '1,2,4')).split(',').map(Number);
const sessions = Number(values.sessions ?? (quick ? 8 : 32));
const turns = Number(values.turns ?? (quick ? 2 : 5));
const latencyMs = Number(values.latency);
const perWorker = Number(values['per-worker']);
const runners = values.runners.split(',') as Runner[];
for (const r of runners)
  if (r !== 'temporal' && r !== 'mongo')
    throw new Error(`--runners takes temporal and/or mongo, not ${JSON.stringify(r)}.`);

Runtime.install({ logger: new DefaultLogger('ERROR') });
const external = process.env.MONGODB_URL;
if (values.backend !== 'sqlite' && values.backend !== 'pg')
  throw new Error(`--backend takes sqlite or pg (FerretDB's backend), not ${JSON.stringify(values.backend)}.`);
const postgres: PostgresServer | undefined =
  external || values.backend !== 'pg' ? undefined : await startPostgres({ settings: { max_connections: '200' } });
const mongo: MongoServer | undefined = external
  ? undefined
  : await startMongoServer(postgres === undefined ? {} : { postgresqlUrl: postgres.url });
const mongoUrl = external ?? mongo!.url;
const temporal = await startTemporalServer({ args: values['server-arg'] ?? [] });
const dir = await mkdtemp(join(tmpdir(), 'baton-temporal-scale-'));
const bundlePath = join(dir, 'workflows.js');
await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
const connection = await Connection.connect({ address: temporal.address });
const client = new Client({ connection });
const outcomes: Outcome[] = [];
process.stdout.write(
  `${sessions} sessions × (1 warm-up + ${turns} timed turns), 2 model calls of ${latencyMs} ms per turn, at most ${perWorker} turns per worker at once; ` +
    `${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; Temporal CLI v1.5.1 start-dev (SQLite)${values['server-arg'] === undefined ? '' : ` ${values['server-arg'].join(' ')}`}; FerretDB 1.24 (${external ? 'MONGODB_URL' : postgres === undefined ? 'SQLite' : postgres.version})\n`,
);
try {
  // Alternate which runner goes first at each worker count, so a drift in the machine's load hits both.
  for (const [i, count] of workerCounts.entries()) {
    const order = i % 2 === 0 ? runners : [...runners].reverse();
    for (const runner of order) {
      const outcome = await measure(runner, count);
      outcomes.push(outcome);
      process.stdout.write(`  measured ${runner} × ${count}: ${rate(outcome).toFixed(1)} turns/s\n`);
    }
  }
} finally {
  await connection.close();
  await temporal.close();
  await mongo?.close();
  await postgres?.close();
  await rm(dir, { recursive: true, force: true });
}
printTable();

async function measure(runner: Runner, count: number): Promise<Outcome> {
  const dbName = `scale_${runner}_${count}_${randomUUID().slice(0, 6)}`;
  const settings: PoolSettings = { count, perWorker, mongoUrl, dbName, modelLatencyMs: latencyMs };
  const pool: WorkerPool =
    runner === 'temporal'
      ? await startTemporalPool({ ...settings, client, temporalAddress: temporal.address, bundlePath })
      : await startMongoPool(settings);
  const sample = () => ({
    workers: sum(pool.pids.map((pid) => sampleCpu(pid))),
    ...(runner === 'temporal' && temporal.pid !== undefined ? { temporal: sampleCpu(temporal.pid) } : {}),
    ...(mongo?.pid === undefined ? {} : { ferretdb: sampleCpu(mongo.pid) }),
    ...(postgres === undefined ? {} : { postgres: sampleCpu(postgres.pid, { children: true }) }),
    driver: sampleCpu(process.pid),
  });
  let before = sample();
  let load: LoadResult;
  let after: typeof before;
  try {
    load = await runSessions({
      prefix: `${runner}${count}`,
      sessions,
      turns,
      send: pool.send,
      onTimed: () => {
        before = sample();
      },
    });
    after = sample();
  } finally {
    await pool.close();
  }
  const diff = (a: CpuSample | undefined, b: CpuSample | undefined) =>
    a === undefined || b === undefined ? undefined : { cpu: a.cpu - b.cpu, waited: a.waited - b.waited };
  const temporalCpu = diff(after.temporal, before.temporal);
  const ferretCpu = diff(after.ferretdb, before.ferretdb);
  const postgresCpu = diff(after.postgres, before.postgres);
  const store = new MongoStore({ url: mongoUrl }, { dbName });
  let lost = 0;
  let duplicated = 0;
  let interleaved = 0;
  try {
    for (const [sessionId, { texts, failed }] of load.sent) {
      const faults = checkHistory(await store.readMessages(sessionId, 'main'), texts, answerTo, failed);
      faults.lost = faults.lost.filter((t) => !failed.has(t)); // a failed turn may be missing; stored ones must be whole
      if (!isClean(faults)) process.stdout.write(`  ${sessionId}: ${JSON.stringify(faults)}\n`);
      lost += faults.lost.length;
      duplicated += faults.duplicated + faults.extra;
      interleaved += faults.interleaved.length + faults.seqGaps;
    }
  } finally {
    await store.close();
  }
  return {
    runner,
    workers: count,
    load,
    cpu: {
      workers: diff(after.workers, before.workers)!,
      ...(temporalCpu === undefined ? {} : { temporal: temporalCpu }),
      ...(ferretCpu === undefined ? {} : { ferretdb: ferretCpu }),
      ...(postgresCpu === undefined ? {} : { postgres: postgresCpu }),
      driver: diff(after.driver, before.driver)!,
    },
    lost,
    duplicated,
    interleaved,
    ...(pool.lateWorkflowTasks === undefined ? {} : { lateWorkflowTasks: pool.lateWorkflowTasks() }),
    ...(pool.retriedAttempts === undefined ? {} : { retriedAttempts: pool.retriedAttempts() }),
  };
}

function sum(samples: CpuSample[]): CpuSample {
  return samples.reduce((a, b) => ({ cpu: a.cpu + b.cpu, waited: a.waited + b.waited }), { cpu: 0, waited: 0 });
}

function rate(o: Outcome): number {
  return o.load.latencies.length / o.load.seconds;
}

function printTable(): void {
  const msPerTurn = (o: Outcome, s: CpuSample | undefined) =>
    s === undefined ? '-' : ((s.cpu * 1000) / Math.max(1, o.load.latencies.length)).toFixed(1);
  const lines = [
    '',
    '| runner | workers | timed turns | turns/s | speed-up | p50 ms | p99 ms | CPU ms/turn: workers | Temporal server | FerretDB | PostgreSQL | driver | cores used (waited) | late workflow tasks / retried turns | failed | history |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const o of outcomes) {
    const base = outcomes.find((b) => b.runner === o.runner && b.workers === 1);
    const all = [o.cpu.workers, o.cpu.temporal, o.cpu.ferretdb, o.cpu.postgres, o.cpu.driver].filter(
      (s) => s !== undefined,
    );
    const used = all.reduce((n, s) => n + s.cpu, 0) / o.load.seconds;
    const waited = all.reduce((n, s) => n + s.waited, 0) / o.load.seconds;
    const check =
      o.lost + o.duplicated + o.interleaved === 0
        ? 'ok'
        : `lost ${o.lost}, duplicated ${o.duplicated}, interleaved ${o.interleaved}`;
    lines.push(
      `| ${o.runner === 'temporal' ? 'Temporal' : 'in-process MongoStore'} | ${o.workers} | ${o.load.latencies.length} | ${rate(o).toFixed(1)} | ${base === undefined ? '-' : `${(rate(o) / rate(base)).toFixed(2)}×`} | ${Math.round(percentile(o.load.latencies, 50))} | ${Math.round(percentile(o.load.latencies, 99))} | ${msPerTurn(o, o.cpu.workers)} | ${msPerTurn(o, o.cpu.temporal)} | ${msPerTurn(o, o.cpu.ferretdb)} | ${msPerTurn(o, o.cpu.postgres)} | ${msPerTurn(o, o.cpu.driver)} | ${used.toFixed(2)} (${waited.toFixed(2)}) | ${o.lateWorkflowTasks === undefined ? '-' : `${o.lateWorkflowTasks} / ${o.retriedAttempts ?? 0}`} | ${o.load.failedTurns} | ${check} |`,
    );
  }
  const ideal = (perWorker * 1000) / (2 * latencyMs);
  lines.push(
    '',
    `Slots bound a worker at ${perWorker} turns / (2 × ${latencyMs} ms) = ${ideal.toFixed(1)} turns/s; cores used counts workers, the servers the runner uses and this driver (waited: runnable, no core free).`,
  );
  for (const runner of runners) {
    const one = outcomes.find((o) => o.runner === runner && o.workers === 1);
    const four = outcomes.find((o) => o.runner === runner && o.workers === 4);
    if (one !== undefined && four !== undefined) {
      const ratio = rate(four) / rate(one);
      lines.push(
        `${runner === 'temporal' ? 'Temporal' : 'in-process MongoStore'}: 4 workers sustain ${ratio.toFixed(2)}× the turns/s of 1 worker (target ≥ 3×: ${ratio >= 3 ? 'met' : 'missed'})`,
      );
    }
  }
  for (const o of outcomes)
    if (o.load.firstError !== undefined)
      lines.push(`${o.runner} × ${o.workers}: first failed turn: ${o.load.firstError}`);
  const faulty = outcomes.filter((o) => o.lost + o.duplicated + o.interleaved + o.load.failedTurns > 0);
  lines.push(
    faulty.length === 0
      ? 'history check: every turn of every session stored once, whole and in order, in every configuration'
      : `history check or turns FAILED in ${faulty.length} configuration(s)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  if (faulty.length > 0) process.exitCode = 1;
}
