/**
 * Scale-out on MongoDB: 1, 2 and 4 worker processes serve the same sessions through one MongoDB
 * database, each turn routed to a worker at random (as a load balancer that is not sticky would),
 * each session a customer who sends a turn, waits for the answer and sends the next. Prints turns/s,
 * p50/p99 turn latency (as the customer sees it: routing, opening the session from the store, the
 * turn), store round trips per turn (commands counted with the driver's command monitoring in each
 * worker), and checks afterwards that no message was lost, duplicated or interleaved.
 *
 * Two workloads: instant models (CPU-bound: 200 sessions on 1, 2, 4 workers) and models that take
 * 300 ms per call (50 sessions per worker: 1 × 50, 2 × 100, 4 × 200).
 *
 * Run: pnpm bench:scale [--turns 3] [--only instant|latency] [--workers 1,4]   (MONGODB_URL overrides the FerretDB it starts;
 * SCALE_DUMP=1 prints the history of every session the check finds fault with)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MongoStore } from '@baton/store-mongo';
import { type MongoServer, startMongoServer } from '../../support/mongoServer.js';
import { checkHistory, isClean } from './historyCheck.js';
import { answerTo } from './scaleDesk.js';
import type { FromWorker, ToWorker } from './scaleProtocol.js';

const WORKER = fileURLToPath(new URL('./scaleWorker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** One measured configuration. */
interface Plan {
  workload: 'instant' | 'latency';
  workers: number;
  sessions: number;
  turnsPerSession: number;
  modelLatencyMs: number;
  /** Turns the load balancer lets one worker serve at once; the rest wait in its queue (their wait counts in the latency). */
  maxInFlightPerWorker: number;
}

/** What one configuration measured. */
interface Outcome {
  plan: Plan;
  seconds: number;
  turnsPerSecond: number;
  p50: number;
  p99: number;
  commandsPerTurn: number;
  byCommand: Record<string, number>;
  failedTurns: number;
  firstError?: string;
  lost: number;
  duplicated: number;
  interleaved: number;
}

/** A started worker process and its pending replies. */
interface Worker {
  child: ChildProcess;
  pending: Map<number, (reply: FromWorker & { kind: 'turn' }) => void>;
  /** Turns routed to it and waiting for a slot (the load balancer's queue). */
  queue: Array<() => void>;
  inFlight: number;
  stats?: (reply: FromWorker & { kind: 'stats' }) => void;
}

function startWorker(url: string, db: string, modelLatencyMs: number): Promise<Worker> {
  const child = fork(WORKER, [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', '--conditions=source'],
    env: { ...process.env, SCALE_MONGODB_URL: url, SCALE_DB: db, SCALE_MODEL_LATENCY_MS: String(modelLatencyMs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const worker: Worker = { child, pending: new Map(), queue: [], inFlight: 0 };
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`scale worker exited with ${code} before it was ready`)));
    child.on('message', (message: FromWorker) => {
      if (message.kind === 'ready') resolve(worker);
      else if (message.kind === 'turn') {
        worker.pending.get(message.id)?.(message);
        worker.pending.delete(message.id);
      } else if (message.kind === 'stats') worker.stats?.(message);
    });
  });
}

let nextTurnId = 0;
/** Routes one turn to `worker`, waiting in its queue while `limit` turns are in flight there. */
async function runTurn(worker: Worker, sessionId: string, text: string, limit = Number.POSITIVE_INFINITY): Promise<FromWorker & { kind: 'turn' }> {
  if (worker.inFlight >= limit) await new Promise<void>((resolve) => worker.queue.push(resolve));
  worker.inFlight += 1;
  const id = nextTurnId++;
  try {
    return await new Promise((resolve) => {
      worker.pending.set(id, resolve);
      worker.child.send({ kind: 'turn', id, sessionId, text } satisfies ToWorker);
    });
  } finally {
    worker.inFlight -= 1;
    worker.queue.shift()?.();
  }
}

function workerStats(worker: Worker): Promise<FromWorker & { kind: 'stats' }> {
  return new Promise((resolve) => {
    worker.stats = resolve;
    worker.child.send({ kind: 'stats' } satisfies ToWorker);
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(url: string, plan: Plan): Promise<Outcome> {
  const db = `baton_scale_${plan.workload}_${plan.workers}_${Math.random().toString(36).slice(2, 8)}`;
  const workers = await Promise.all(Array.from({ length: plan.workers }, () => startWorker(url, db, plan.modelLatencyMs)));
  try {
    // Warm-up: two turns of a session of its own on every worker, then the counters start from zero.
    await Promise.all(workers.map(async (worker, w) => {
      for (const turn of [0, 1]) await runTurn(worker, `warmup-${w}`, `warm-up ${turn}`);
    }));
    for (const worker of workers) worker.child.send({ kind: 'reset' } satisfies ToWorker);

    const latencies: number[] = [];
    const sent = new Map<string, { texts: string[]; failed: Set<number> }>();
    let failedTurns = 0;
    let firstError: string | undefined;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: plan.sessions }, async (_, s) => {
        const sessionId = `customer-${s}`;
        const texts: string[] = [];
        const failed = new Set<number>();
        sent.set(sessionId, { texts, failed });
        for (let t = 0; t < plan.turnsPerSession; t += 1) {
          const text = `session ${s} turn ${t}`;
          const worker = workers[Math.floor(Math.random() * workers.length)]!;
          const at = performance.now();
          const reply = await runTurn(worker, sessionId, text, plan.maxInFlightPerWorker);
          latencies.push(performance.now() - at);
          texts.push(text);
          if (reply.error !== undefined) {
            failed.add(t);
            failedTurns += 1;
            firstError ??= reply.error;
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const stats = await Promise.all(workers.map(workerStats));
    const turns = stats.reduce((n, s) => n + s.turns, 0);
    const byCommand: Record<string, number> = {};
    for (const s of stats) for (const [name, count] of Object.entries(s.commands)) byCommand[name] = (byCommand[name] ?? 0) + count;
    for (const name of Object.keys(byCommand)) byCommand[name] = byCommand[name]! / Math.max(1, turns);
    const commandsPerTurn = Object.values(byCommand).reduce((a, b) => a + b, 0);

    // The check reads every session back through a store of its own.
    const store = new MongoStore({ url }, { dbName: db });
    let lost = 0;
    let duplicated = 0;
    let interleaved = 0;
    try {
      for (const [sessionId, { texts, failed }] of sent) {
        const messages = await store.readMessages(sessionId, 'main').catch(() => []);
        const faults = checkHistory(messages, texts, answerTo, failed);
        // A turn that failed (the store refused a write) may be missing; any turn that is stored must be whole and in place.
        faults.lost = faults.lost.filter((turn) => !failed.has(turn));
        if (!isClean(faults) && process.env.SCALE_DUMP !== undefined) {
          console.log(sessionId, JSON.stringify(faults), messages.map((m) => `${m.seq}:${m.role}:${m.agent ?? ''}:${m.content.slice(0, 30)}:${m.toolCalls?.[0]?.id ?? m.toolCallId ?? ''}`).join(' | '));
        }
        if (!isClean(faults)) {
          lost += faults.lost.length;
          duplicated += faults.duplicated + faults.extra;
          interleaved += faults.interleaved.length + faults.seqGaps;
        }
      }
    } finally {
      await store.close();
    }
    latencies.sort((a, b) => a - b);
    return {
      plan,
      seconds,
      turnsPerSecond: latencies.length / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      commandsPerTurn,
      byCommand,
      failedTurns,
      ...(firstError === undefined ? {} : { firstError }),
      lost,
      duplicated,
      interleaved,
    };
  } finally {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker.child.once('exit', () => resolve());
            worker.child.send({ kind: 'exit' } satisfies ToWorker);
          }),
      ),
    );
  }
}

function row(o: Outcome): string {
  const p = o.plan;
  const commands = Object.entries(o.byCommand)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n.toFixed(2)}`)
    .join(', ');
  const check = o.lost + o.duplicated + o.interleaved === 0 ? 'ok' : `lost ${o.lost}, duplicated ${o.duplicated}, interleaved ${o.interleaved}`;
  return `| ${p.workload} ${p.modelLatencyMs} ms | ${p.workers} | ${p.sessions} | ${p.maxInFlightPerWorker} | ${p.sessions * p.turnsPerSession} | ${o.turnsPerSecond.toFixed(1)} | ${o.p50.toFixed(1)} | ${o.p99.toFixed(1)} | ${o.commandsPerTurn.toFixed(2)} (${commands}) | ${o.failedTurns} | ${check} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { turns: { type: 'string', default: '3' }, only: { type: 'string' }, workers: { type: 'string' } } });
  const turnsPerSession = Number(values.turns);
  console.log(`cores: ${availableParallelism()} available (${cpus().length} reported), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, Node ${process.version}`);
  let server: MongoServer | undefined;
  let url = process.env.MONGODB_URL ?? '';
  if (url === '') {
    server = await startMongoServer();
    url = server.url;
    console.log(`store: FerretDB 1.24 (SQLite) on ${url}, started for this run; MONGODB_URL overrides`);
  } else console.log('store: MONGODB_URL');
  const plans: Plan[] = [];
  if (values.only !== 'latency') for (const workers of [1, 2, 4]) plans.push({ workload: 'instant', workers, sessions: 200, turnsPerSession, modelLatencyMs: 0, maxInFlightPerWorker: 8 });
  if (values.only !== 'instant') for (const workers of [1, 2, 4]) plans.push({ workload: 'latency', workers, sessions: 50 * workers, turnsPerSession, modelLatencyMs: 300, maxInFlightPerWorker: 50 });
  if (values.workers !== undefined) {
    const keep = values.workers.split(',').map(Number);
    plans.splice(0, plans.length, ...plans.filter((p) => keep.includes(p.workers)));
  }
  const outcomes: Outcome[] = [];
  try {
    console.log('\n| models | workers | sessions | in flight per worker | turns | turns/s | p50 ms | p99 ms | store round trips per turn | turns failed (store error) | history check |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const plan of plans) {
      const outcome = await measure(url, plan);
      outcomes.push(outcome);
      console.log(row(outcome));
      if (outcome.firstError !== undefined) console.log(`  first failed turn: ${outcome.firstError}`);
    }
  } finally {
    await server?.close();
  }
  const latency = (workers: number) => outcomes.find((o) => o.plan.workload === 'latency' && o.plan.workers === workers);
  const one = latency(1);
  const four = latency(4);
  if (one !== undefined && four !== undefined) {
    const ratio = four.turnsPerSecond / one.turnsPerSecond;
    console.log(`\n300 ms models: 4 workers × 50 sessions sustain ${ratio.toFixed(2)}× the turns/s of 1 worker × 50 sessions (target ≥ 3×: ${ratio >= 3 ? 'met' : 'missed'})`);
  }
  const faulty = outcomes.filter((o) => o.lost + o.duplicated + o.interleaved > 0);
  if (faulty.length > 0) {
    console.log(`\nhistory check FAILED in ${faulty.length} configuration(s)`);
    process.exitCode = 1;
  } else console.log('\nhistory check: every turn of every session stored once, whole and in order (a failed turn missing or finished by a later call, never mixed)');
}

await main();
