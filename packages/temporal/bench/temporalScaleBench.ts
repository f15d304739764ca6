/**
 * Scale-out on Temporal: 1, 2 and 4 Baton worker processes (`createBatonWorker`, at most 8 turns
 * each at once, as a real pool caps them) serve the same sessions, each model call taking 300 ms,
 * so the load is latency-bound and this machine's 2 cores are not the limit. Each session is a
 * customer who sends a turn (a Temporal Update), waits for the committed answer, and sends the next.
 * Prints turns/s, p50/p99 turn latency as the customer sees it, the workers' CPU per turn and cores
 * used (the workflow tasks included), the speed-up over 1 worker, and then checks every session's
 * stored history: no turn lost, duplicated or interleaved (test/bench/scale/historyCheck.ts).
 *
 * Store: MongoStore on a FerretDB started for the run (MONGODB_URL overrides); Temporal: a
 * `temporal server start-dev` started for the run.
 *
 * Run: pnpm bench:scale:temporal [--workers 1,2,4] [--sessions 32] [--turns 3] [--latency 300] [--per-worker 8]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MongoStore } from '@baton/store-mongo';
import { bundleBatonWorkflows, TemporalSessions } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { checkHistory, isClean } from '../../../test/bench/scale/historyCheck.js';
import { sampleCpu } from '../../../test/bench/scale/processCpu.js';
import { answerTo } from '../../../test/bench/scale/scaleDesk.js';
import { type MongoServer, startMongoServer } from '../../../test/support/mongoServer.js';
import { startTemporalServer } from '../test/support/temporalServer.js';

const WORKER = fileURLToPath(new URL('./scaleTemporalWorker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '1,2,4' },
    sessions: { type: 'string', default: '32' },
    turns: { type: 'string', default: '3' },
    latency: { type: 'string', default: '300' },
    'per-worker': { type: 'string', default: '8' },
  },
});
const workerCounts = values.workers.split(',').map(Number);
const sessions = Number(values.sessions);
const turns = Number(values.turns);
const latencyMs = Number(values.latency);
const perWorker = Number(values['per-worker']);

interface Row {
  workers: number;
  turnsPerSecond: number;
  p50: number;
  p99: number;
  cpuMsPerTurn: number;
  coresUsed: number;
  failed: number;
  lost: number;
  duplicated: number;
  interleaved: number;
}

Runtime.install({ logger: new DefaultLogger('ERROR') });
const external = process.env.MONGODB_URL;
const mongo: MongoServer | undefined = external ? undefined : await startMongoServer();
const mongoUrl = external ?? mongo!.url;
const temporal = await startTemporalServer();
const dir = await mkdtemp(join(tmpdir(), 'baton-temporal-scale-'));
const bundlePath = join(dir, 'workflows.js');
await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
const connection = await Connection.connect({ address: temporal.address });
const client = new Client({ connection });
const rows: Row[] = [];
try {
  process.stdout.write(
    `Temporal workers, ${sessions} sessions × ${turns} turns, model calls of ${latencyMs} ms, at most ${perWorker} turns per worker at once\n`,
  );
  for (const count of workerCounts) rows.push(await measure(count));
} finally {
  await connection.close();
  await temporal.close();
  await mongo?.close();
  await rm(dir, { recursive: true, force: true });
}
const base = rows.find((r) => r.workers === 1);
process.stdout.write(
  'workers  turns/s  speed-up  p50 ms  p99 ms  CPU ms/turn  cores  failed  lost  duplicated  interleaved\n',
);
for (const r of rows) {
  const speedUp = base === undefined ? '-' : `${(r.turnsPerSecond / base.turnsPerSecond).toFixed(2)}×`;
  process.stdout.write(
    `${String(r.workers).padStart(7)}  ${r.turnsPerSecond.toFixed(1).padStart(7)}  ${speedUp.padStart(8)}  ${String(r.p50).padStart(6)}  ${String(r.p99).padStart(6)}  ${r.cpuMsPerTurn.toFixed(1).padStart(11)}  ${r.coresUsed.toFixed(2).padStart(5)}  ${String(r.failed).padStart(6)}  ${String(r.lost).padStart(4)}  ${String(r.duplicated).padStart(10)}  ${String(r.interleaved).padStart(11)}\n`,
  );
}
if (rows.some((r) => r.lost + r.duplicated + r.interleaved + r.failed > 0)) process.exitCode = 1;

async function measure(count: number): Promise<Row> {
  const dbName = `scale_temporal_${count}_${randomUUID().slice(0, 6)}`;
  const taskQueue = `scale-${count}-${randomUUID().slice(0, 6)}`;
  const children = await Promise.all(Array.from({ length: count }, () => startWorker(dbName, taskQueue)));
  const pids = children.map((c) => c.pid ?? 0);
  const pool = new TemporalSessions({ client, taskQueue });
  const latencies: number[] = [];
  const sent = new Map<string, string[]>();
  let failed = 0;
  const cpuBefore = pids.reduce((sum, pid) => sum + sampleCpu(pid).cpu, 0);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      const sessionId = `w${count}-s${s}`; // a session of its own per configuration: a session workflow stays on the task queue that started it
      const chat = pool.session({ sessionId });
      const texts: string[] = [];
      sent.set(sessionId, texts);
      for (let t = 0; t < turns; t += 1) {
        const text = `session ${s} turn ${t}`;
        texts.push(text);
        const t0 = performance.now();
        try {
          await chat.send(text);
          latencies.push(performance.now() - t0);
        } catch {
          failed += 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = pids.reduce((sum, pid) => sum + sampleCpu(pid).cpu, 0) - cpuBefore;
  for (const child of children) if (child.connected) child.send({ kind: 'exit' });
  await Promise.all(
    children.map(
      (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve))),
    ),
  );
  const store = new MongoStore({ url: mongoUrl }, { dbName });
  let lost = 0;
  let duplicated = 0;
  let interleaved = 0;
  try {
    for (const [sessionId, texts] of sent) {
      const faults = checkHistory(await store.readMessages(sessionId, 'main'), texts, answerTo);
      if (!isClean(faults)) process.stdout.write(`  ${sessionId}: ${JSON.stringify(faults)}\n`);
      lost += faults.lost.length;
      duplicated += faults.duplicated;
      interleaved += faults.interleaved.length;
    }
  } finally {
    await store.close();
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  const done = latencies.length;
  return {
    workers: count,
    turnsPerSecond: done / seconds,
    p50: at(0.5),
    p99: at(0.99),
    cpuMsPerTurn: done === 0 ? 0 : (cpu * 1000) / done,
    coresUsed: cpu / seconds,
    failed,
    lost,
    duplicated,
    interleaved,
  };
}

function startWorker(dbName: string, taskQueue: string): Promise<ChildProcess> {
  const child = fork(WORKER, [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', '--conditions=source'],
    env: {
      ...process.env,
      SCALE_TEMPORAL_ADDRESS: temporal.address,
      SCALE_TASK_QUEUE: taskQueue,
      SCALE_MONGODB_URL: mongoUrl,
      SCALE_DB: dbName,
      SCALE_MODEL_LATENCY_MS: String(latencyMs),
      SCALE_MAX_TURNS: String(perWorker),
      SCALE_BUNDLE: bundlePath,
    },
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code, signal) => {
      if (code !== 0) process.stderr.write(`a worker (pid ${child.pid}) exited with code ${code}, signal ${signal}\n`);
      reject(new Error(`a worker exited (code ${code}) before it was ready`));
    });
  });
}
