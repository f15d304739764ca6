/**
 * The scale bench's worker processes (scaleWorker.ts) and the load balancer in front of them: each
 * worker takes turns over IPC, at most a given number at once, the rest waiting in its queue.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FromWorker, ToWorker } from './scaleProtocol.js';

const WORKER = fileURLToPath(new URL('./scaleWorker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A started worker process and its pending replies. */
export interface Worker {
  child: ChildProcess;
  pending: Map<number, (reply: FromWorker & { kind: 'turn' }) => void>;
  /** Turns routed to it and waiting for a slot (the load balancer's queue). */
  queue: Array<() => void>;
  inFlight: number;
  stats?: (reply: FromWorker & { kind: 'stats' }) => void;
}

/**
 * Forks a scale worker (scaleWorker.ts) on database `db` whose model calls take `modelLatencyMs`;
 * `monitorCommands` makes it count commands by name (the driver's command monitoring, which costs it CPU).
 */
export function startWorker(
  url: string,
  db: string,
  modelLatencyMs: number,
  monitorCommands: boolean,
): Promise<Worker> {
  const child = fork(WORKER, [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', '--conditions=source'],
    env: {
      ...process.env,
      SCALE_MONGODB_URL: url,
      SCALE_DB: db,
      SCALE_MODEL_LATENCY_MS: String(modelLatencyMs),
      SCALE_MONITOR_COMMANDS: monitorCommands ? '1' : '0',
    },
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
export async function runTurn(
  worker: Worker,
  sessionId: string,
  text: string,
  limit = Number.POSITIVE_INFINITY,
): Promise<FromWorker & { kind: 'turn' }> {
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

/** The worker's counters since its last reset. */
export function workerStats(worker: Worker): Promise<FromWorker & { kind: 'stats' }> {
  return new Promise((resolve) => {
    worker.stats = resolve;
    worker.child.send({ kind: 'stats' } satisfies ToWorker);
  });
}

/** Asks each worker to exit and waits until it has. */
export async function stopWorkers(workers: readonly Worker[]): Promise<void> {
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
