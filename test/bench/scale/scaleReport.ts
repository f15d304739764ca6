/** What one configuration of the scale bench measured, and how it is printed. */
import { availableParallelism, loadavg } from 'node:os';
import type { CpuSample } from './processCpu.js';

/** One measured configuration. */
export interface Plan {
  workload: 'instant' | 'latency';
  workers: number;
  sessions: number;
  turnsPerSession: number;
  modelLatencyMs: number;
  /** Turns the load balancer lets one worker serve at once; the rest wait in its queue (their wait counts in the latency). */
  maxInFlightPerWorker: number;
}

/** What one configuration measured. */
export interface Outcome {
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
  /**
   * CPU during the measured turns, in cores (seconds per second of the run: 1 = one core busy all
   * the time): used on a core, and waited for one while runnable; absent without /proc.
   */
  cpu?: { workers: CpuSample[]; ferretdb?: CpuSample; postgres?: CpuSample; driver: CpuSample };
}

/** The outcome as a row of the bench's Markdown table. */
export function row(o: Outcome): string {
  const p = o.plan;
  const commands = Object.entries(o.byCommand)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n.toFixed(2)}`)
    .join(', ');
  const check =
    o.lost + o.duplicated + o.interleaved === 0
      ? 'ok'
      : `lost ${o.lost}, duplicated ${o.duplicated}, interleaved ${o.interleaved}`;
  const trips = commands === '' ? o.commandsPerTurn.toFixed(2) : `${o.commandsPerTurn.toFixed(2)} (${commands})`;
  return `| ${p.workload} ${p.modelLatencyMs} ms | ${p.workers} | ${p.sessions} | ${p.maxInFlightPerWorker} | ${p.sessions * p.turnsPerSession} | ${o.turnsPerSecond.toFixed(1)} | ${o.p50.toFixed(1)} | ${o.p99.toFixed(1)} | ${trips} | ${o.failedTurns} | ${check} |`;
}

/**
 * How a configuration's CPU use reads, in cores over the run, used/waited:
 * `workers 0.31/0.40 0.29/0.38, FerretDB 0.95/0.50, PostgreSQL 0.40/0.20, driver 0.05/0.01`.
 */
export function cpuLines(o: Outcome): string[] {
  const cpu = o.cpu;
  if (cpu === undefined) return [];
  const pair = (s: CpuSample) => `${s.cpu.toFixed(2)}/${s.waited.toFixed(2)}`;
  const parts = [`workers ${cpu.workers.map(pair).join(' ')}`];
  if (cpu.ferretdb !== undefined) parts.push(`FerretDB ${pair(cpu.ferretdb)}`);
  if (cpu.postgres !== undefined) parts.push(`PostgreSQL ${pair(cpu.postgres)}`);
  parts.push(`driver ${pair(cpu.driver)}`);
  const all = [
    ...cpu.workers,
    cpu.driver,
    ...(cpu.ferretdb === undefined ? [] : [cpu.ferretdb]),
    ...(cpu.postgres === undefined ? [] : [cpu.postgres]),
  ];
  const used = all.reduce((n, s) => n + s.cpu, 0);
  const waited = all.reduce((n, s) => n + s.waited, 0);
  // CPU per turn does not depend on how busy the machine is, so it bounds what these cores can serve.
  const msPerTurn = (cores: number) => (cores * 1000) / o.turnsPerSecond;
  const perTurn = [`workers ${msPerTurn(cpu.workers.reduce((n, s) => n + s.cpu, 0)).toFixed(1)}`];
  if (cpu.ferretdb !== undefined) perTurn.push(`FerretDB ${msPerTurn(cpu.ferretdb.cpu).toFixed(1)}`);
  if (cpu.postgres !== undefined) perTurn.push(`PostgreSQL ${msPerTurn(cpu.postgres.cpu).toFixed(1)}`);
  perTurn.push(`driver ${msPerTurn(cpu.driver.cpu).toFixed(1)}`);
  const cores = availableParallelism();
  return [
    `  CPU, cores used/waited for (runnable, no core free): ${parts.join(', ')}`,
    `  these processes: ${used.toFixed(2)} of ${cores} cores used, ${waited.toFixed(2)} waited for; load average ${loadavg()[0]!.toFixed(2)}`,
    `  CPU ms per turn: ${perTurn.join(', ')}; total ${msPerTurn(used).toFixed(1)}, so ${cores} idle cores could serve at most ${((cores * 1000) / msPerTurn(used)).toFixed(0)} turns/s`,
  ];
}
