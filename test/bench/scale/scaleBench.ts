/**
 * Scale-out on MongoDB: 1, 2 and 4 worker processes serve the same sessions through one MongoDB
 * database, each turn routed to a worker at random (as a load balancer that is not sticky would),
 * each session a customer who sends a turn, waits for the answer and sends the next. Prints turns/s,
 * p50/p99 turn latency (as the customer sees it: routing, opening the session from the store, the
 * turn), store round trips per turn (each worker's connection check-outs, one per command; by
 * command name with `--commands`, which turns on the driver's command monitoring in the workers and
 * so adds its CPU to theirs), and checks afterwards that no message was lost, duplicated or interleaved.
 * First it prints the round trips of a steady-state turn by command (steadyStateTurns.ts: turns
 * served one at a time in this process, counted with the driver's command monitoring).
 *
 * Two workloads: instant models (CPU-bound: 200 sessions on 1, 2, 4 workers) and models that take
 * 300 ms per call (50 sessions per worker: 1 × 50, 2 × 100, 4 × 200). Then the event log's cost per
 * turn through @baton/server, on FileStore and MongoStore (eventLogCost.ts).
 *
 * Store: FerretDB 1.24, started for the run, on a throwaway PostgreSQL of its own (`--backend pg`,
 * the default when PostgreSQL's server binaries are found, see postgresServer.ts) or on its embedded
 * SQLite (`--backend sqlite`); MONGODB_URL overrides both. Prints each process's CPU use (workers,
 * FerretDB, PostgreSQL, this driver) per configuration: cores used, and cores waited for while runnable.
 *
 * Run: pnpm bench:scale [--turns 3] [--only instant|latency|eventlog] [--workers 1,4] [--backend pg|sqlite] [--pg name=value …] [--commands]
 * (`--pg` passes a setting to the PostgreSQL it starts, e.g. `--pg synchronous_commit=off`;
 * SCALE_DUMP=1 prints the history of every session the check finds fault with)
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MongoStore } from '@baton/store-mongo';
import { eventLogCostLines, measureEventLogCost } from './eventLogCost.js';
import { checkHistory, isClean } from './historyCheck.js';
import { type CpuSample, hasProc, sampleCpu } from './processCpu.js';
import { answerTo } from './scaleDesk.js';
import type { ToWorker } from './scaleProtocol.js';
import { cpuLines, type Outcome, type Plan, row } from './scaleReport.js';
import { type ServerPids, startStore } from './scaleStore.js';
import { runTurn, startWorker, stopWorkers, workerStats } from './scaleWorkerPool.js';
import { formatSteadyState, steadyStateRoundTrips } from './steadyStateTurns.js';

/** Whether the workers count commands by name (`--commands`: the driver's command monitoring, which costs them CPU). */
let monitorCommands = false;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(url: string, plan: Plan, servers: ServerPids): Promise<Outcome> {
  const db = `baton_scale_${plan.workload}_${plan.workers}_${Math.random().toString(36).slice(2, 8)}`;
  const workers = await Promise.all(
    Array.from({ length: plan.workers }, () => startWorker(url, db, plan.modelLatencyMs, monitorCommands)),
  );
  try {
    // Warm-up: 60 turns of sessions of its own on every worker (6 at a time), so the measured turns
    // run compiled code, as a long-running worker's do (a cold worker spends more CPU per turn); then
    // the counters start from zero.
    await Promise.all(
      workers.flatMap((worker, w) =>
        Array.from({ length: 6 }, async (_, s) => {
          for (let turn = 0; turn < 10; turn += 1) await runTurn(worker, `warmup-${w}-${s}`, `warm-up ${turn}`);
        }),
      ),
    );
    for (const worker of workers) worker.child.send({ kind: 'reset' } satisfies ToWorker);

    const latencies: number[] = [];
    const sent = new Map<string, { texts: string[]; failed: Set<number> }>();
    let failedTurns = 0;
    let firstError: string | undefined;
    const cpuNow = () => ({
      workers: workers.map((w) => (w.child.pid === undefined ? { cpu: 0, waited: 0 } : sampleCpu(w.child.pid))),
      ferretdb: servers.ferretdb === undefined ? undefined : sampleCpu(servers.ferretdb),
      postgres: servers.postgres === undefined ? undefined : sampleCpu(servers.postgres, { children: true }),
      driver: sampleCpu(process.pid),
    });
    const cpuBefore = hasProc ? cpuNow() : undefined;
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
    const cpuAfter = cpuBefore === undefined ? undefined : cpuNow();
    let cpu: Outcome['cpu'];
    if (cpuBefore !== undefined && cpuAfter !== undefined) {
      const rate = (after: CpuSample, before: CpuSample): CpuSample => ({
        cpu: (after.cpu - before.cpu) / seconds,
        waited: (after.waited - before.waited) / seconds,
      });
      const ferretdb =
        cpuAfter.ferretdb === undefined || cpuBefore.ferretdb === undefined
          ? undefined
          : rate(cpuAfter.ferretdb, cpuBefore.ferretdb);
      const postgres =
        cpuAfter.postgres === undefined || cpuBefore.postgres === undefined
          ? undefined
          : rate(cpuAfter.postgres, cpuBefore.postgres);
      cpu = {
        workers: cpuAfter.workers.map((after, i) => rate(after, cpuBefore.workers[i]!)),
        ...(ferretdb === undefined ? {} : { ferretdb }),
        ...(postgres === undefined ? {} : { postgres }),
        driver: rate(cpuAfter.driver, cpuBefore.driver),
      };
    }
    const stats = await Promise.all(workers.map(workerStats));
    const turns = stats.reduce((n, s) => n + s.turns, 0);
    const byCommand: Record<string, number> = {};
    for (const s of stats)
      for (const [name, count] of Object.entries(s.commands)) byCommand[name] = (byCommand[name] ?? 0) + count;
    for (const name of Object.keys(byCommand)) byCommand[name] = byCommand[name]! / Math.max(1, turns);
    const commandsPerTurn = stats.reduce((n, s) => n + s.roundTrips, 0) / Math.max(1, turns);

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
          console.log(
            sessionId,
            JSON.stringify(faults),
            messages
              .map(
                (m) =>
                  `${m.seq}:${m.role}:${m.agent ?? ''}:${m.content.slice(0, 30)}:${m.toolCalls?.[0]?.id ?? m.toolCallId ?? ''}`,
              )
              .join(' | '),
          );
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
      ...(cpu === undefined ? {} : { cpu }),
    };
  } finally {
    await stopWorkers(workers);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '3' },
      only: { type: 'string' },
      workers: { type: 'string' },
      backend: { type: 'string' },
      pg: { type: 'string', multiple: true },
      commands: { type: 'boolean', default: false },
    },
  });
  monitorCommands = values.commands;
  const turnsPerSession = Number(values.turns);
  console.log(
    `cores: ${availableParallelism()} available (${cpus().length} reported), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}`,
  );
  const store = await startStore(values.backend, values.pg ?? []);
  const { url } = store;
  const plans: Plan[] = [];
  if (values.only === undefined || values.only === 'instant')
    for (const workers of [1, 2, 4])
      plans.push({
        workload: 'instant',
        workers,
        sessions: 200,
        turnsPerSession,
        modelLatencyMs: 0,
        maxInFlightPerWorker: 8,
      });
  if (values.only === undefined || values.only === 'latency')
    for (const workers of [1, 2, 4])
      plans.push({
        workload: 'latency',
        workers,
        sessions: 50 * workers,
        turnsPerSession,
        modelLatencyMs: 300,
        maxInFlightPerWorker: 50,
      });
  if (values.workers !== undefined) {
    const keep = values.workers.split(',').map(Number);
    plans.splice(0, plans.length, ...plans.filter((p) => keep.includes(p.workers)));
  }
  const outcomes: Outcome[] = [];
  try {
    // Counted alone, one turn at a time with command monitoring, so the figure is exact and the
    // workers' CPU below carries no monitoring.
    const steady = await steadyStateRoundTrips(url, { sessions: 4, turnsPerSession: 11 });
    console.log(
      `\nsteady-state turn of a stateless worker (a session's turns 2–11, prunes and claim sweeps included):`,
    );
    console.log(`  ${formatSteadyState(steady)}`);
    console.log(
      '\n| models | workers | sessions | in flight per worker | turns | turns/s | p50 ms | p99 ms | store round trips per turn | turns failed (store error) | history check |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const plan of plans) {
      const outcome = await measure(url, plan, store.servers);
      outcomes.push(outcome);
      console.log(row(outcome));
      for (const line of cpuLines(outcome)) console.log(line);
      if (outcome.firstError !== undefined) console.log(`  first failed turn: ${outcome.firstError}`);
    }
    if (values.only === undefined || values.only === 'eventlog') {
      console.log('\nEvent log per turn (@baton/server, one turn at a time, 5 sessions):\n');
      for (const line of eventLogCostLines(await measureEventLogCost(url, 10 * turnsPerSession))) console.log(line);
    }
  } finally {
    await store.close();
  }
  const latency = (workers: number) =>
    outcomes.find((o) => o.plan.workload === 'latency' && o.plan.workers === workers);
  const one = latency(1);
  const four = latency(4);
  if (one !== undefined && four !== undefined) {
    const ratio = four.turnsPerSecond / one.turnsPerSecond;
    console.log(
      `\n300 ms models: 4 workers × 50 sessions sustain ${ratio.toFixed(2)}× the turns/s of 1 worker × 50 sessions (target ≥ 3×: ${ratio >= 3 ? 'met' : 'missed'})`,
    );
  }
  const faulty = outcomes.filter((o) => o.lost + o.duplicated + o.interleaved > 0);
  if (faulty.length > 0) {
    console.log(`\nhistory check FAILED in ${faulty.length} configuration(s)`);
    process.exitCode = 1;
  } else
    console.log(
      '\nhistory check: every turn of every session stored once, whole and in order (a failed turn missing or finished by a later call, never mixed)',
    );
}

await main();
