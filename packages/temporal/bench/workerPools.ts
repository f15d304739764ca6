/**
 * The two kinds of worker pool temporalScaleBench.ts compares, each `count` processes of at most
 * `perWorker` turns at once, on the same store and scale desk (test/bench/scale/scaleDesk.ts):
 *
 * - `temporal`: Baton Temporal workers (scaleTemporalWorker.ts, `createBatonWorker`) on their own
 *   task queue; the driver sends each turn as the session workflow's Update (`TemporalSession.send`)
 *   and Temporal hands the turn activity to a worker with a free slot.
 * - `mongo`: test/bench/scale/scaleWorker.ts, stateless in-process workers that open the session
 *   from MongoStore for each turn; the driver is the load balancer, sending each turn to the worker
 *   with the fewest turns in flight, queueing it while every worker is at `perWorker`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type TemporalSession, TemporalSessions } from '@baton/temporal';
import type { Client } from '@temporalio/client';
import type { FromWorker, ToWorker } from '../../../test/bench/scale/scaleProtocol.js';
import type { SendTurn } from './sessionLoad.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TEMPORAL_WORKER = fileURLToPath(new URL('./scaleTemporalWorker.ts', import.meta.url));
const MONGO_WORKER = fileURLToPath(new URL('../../../test/bench/scale/scaleWorker.ts', import.meta.url));

/** A started pool. */
export interface WorkerPool {
  /** The worker processes' ids (their CPU is sampled). */
  pids: number[];
  send: SendTurn;
  /** Asks every worker to exit and waits until they have. */
  close(): Promise<void>;
  /** Temporal only, after `close()`: workflow tasks the workers completed after their timeout (a starved worker or server). */
  lateWorkflowTasks?: () => number;
  /** Temporal only, after `close()`: turn activity attempts after the first (a retried turn). */
  retriedAttempts?: () => number;
}

/** What both pools need. */
export interface PoolSettings {
  count: number;
  perWorker: number;
  mongoUrl: string;
  dbName: string;
  modelLatencyMs: number;
}

/** Starts `count` Temporal workers on a task queue of their own. */
export async function startTemporalPool(
  settings: PoolSettings & { client: Client; temporalAddress: string; bundlePath: string },
): Promise<WorkerPool> {
  const taskQueue = `scale-${settings.count}-${randomUUID().slice(0, 6)}`;
  const env = {
    SCALE_TEMPORAL_ADDRESS: settings.temporalAddress,
    SCALE_TASK_QUEUE: taskQueue,
    SCALE_MONGODB_URL: settings.mongoUrl,
    SCALE_DB: settings.dbName,
    SCALE_MODEL_LATENCY_MS: String(settings.modelLatencyMs),
    SCALE_MAX_TURNS: String(settings.perWorker),
    SCALE_BUNDLE: settings.bundlePath,
  };
  const children = await Promise.all(Array.from({ length: settings.count }, () => startChild(TEMPORAL_WORKER, env)));
  let late = 0;
  let retried = 0;
  for (const child of children)
    child.on('message', (message: { kind?: string; lateWorkflowTasks?: number; retriedAttempts?: number }) => {
      if (message.kind !== 'late') return;
      late += message.lateWorkflowTasks ?? 0;
      retried += message.retriedAttempts ?? 0;
    });
  const sessions = new TemporalSessions({ client: settings.client, taskQueue });
  const opened = new Map<string, TemporalSession>();
  return {
    pids: children.map((c) => c.pid ?? 0),
    send: async (sessionId, text) => {
      let session = opened.get(sessionId);
      if (session === undefined) {
        session = sessions.session({ sessionId });
        opened.set(sessionId, session);
      }
      await session.send(text);
    },
    close: () => stopAll(children, { kind: 'exit' }),
    lateWorkflowTasks: () => late,
    retriedAttempts: () => retried,
  };
}

/** Starts `count` in-process MongoStore workers behind a least-loaded balancer capped at `perWorker`. */
export async function startMongoPool(settings: PoolSettings): Promise<WorkerPool> {
  const env = {
    SCALE_MONGODB_URL: settings.mongoUrl,
    SCALE_DB: settings.dbName,
    SCALE_MODEL_LATENCY_MS: String(settings.modelLatencyMs),
    SCALE_MONITOR_COMMANDS: '0',
  };
  const children = await Promise.all(Array.from({ length: settings.count }, () => startChild(MONGO_WORKER, env)));
  const inFlight = children.map(() => 0);
  const waiting: Array<() => void> = [];
  const pending = new Map<number, (reply: FromWorker & { kind: 'turn' }) => void>();
  for (const child of children) {
    child.on('message', (message: FromWorker) => {
      if (message.kind !== 'turn') return;
      pending.get(message.id)?.(message);
      pending.delete(message.id);
    });
  }
  let nextId = 0;
  const freest = () => inFlight.indexOf(Math.min(...inFlight));
  return {
    pids: children.map((c) => c.pid ?? 0),
    send: async (sessionId, text) => {
      while (inFlight[freest()]! >= settings.perWorker) await new Promise<void>((resolve) => waiting.push(resolve));
      const w = freest();
      inFlight[w]! += 1;
      const id = nextId++;
      try {
        const reply = await new Promise<FromWorker & { kind: 'turn' }>((resolve) => {
          pending.set(id, resolve);
          children[w]!.send({ kind: 'turn', id, sessionId, text } satisfies ToWorker);
        });
        if (reply.error !== undefined) throw new Error(reply.error);
      } finally {
        inFlight[w]! -= 1;
        waiting.shift()?.();
      }
    },
    close: () => stopAll(children, { kind: 'exit' } satisfies ToWorker),
  };
}

/** Forks a worker script (tsx, `source` condition) and waits for its `ready`. */
function startChild(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = fork(script, [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', '--conditions=source'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const onReady = (message: { kind?: string }) => {
      if (message.kind !== 'ready') return;
      child.off('message', onReady);
      resolve(child);
    };
    child.on('message', onReady);
    child.once('exit', (code, signal) =>
      reject(new Error(`${script} (pid ${child.pid}) exited before it was ready (code ${code}, signal ${signal})`)),
    );
  });
}

function stopAll(children: ChildProcess[], exit: { kind: 'exit' }): Promise<void> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          if (child.connected) child.send(exit);
          else child.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}
