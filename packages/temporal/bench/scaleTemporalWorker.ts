/**
 * One Temporal worker of temporalScaleBench.ts, in its own process: serves the scale desk's session
 * workflows and turns (test/bench/scale/scaleDesk.ts, each model call delayed by
 * SCALE_MODEL_LATENCY_MS) from task queue SCALE_TASK_QUEUE, at most SCALE_MAX_TURNS turns at once,
 * with MongoStore on SCALE_MONGODB_URL / SCALE_DB. Says `{ kind: 'ready', pid }` over IPC; on `{ kind: 'exit' }`
 * shuts down, says `{ kind: 'late', lateWorkflowTasks, retriedAttempts }` (workflow tasks completed after their timeout,
 * activity attempts after the first) and exits. SCALE_TRACE=<file> logs each turn attempt it runs (see `trace`).
 */
import { appendFileSync } from 'node:fs';
import { MongoStore } from '@baton/store-mongo';
import { createBatonWorker } from '@baton/temporal';
import type { Info } from '@temporalio/activity';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { scaleDesk } from '../../../test/bench/scale/scaleDesk.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '')
    throw new Error(`${name} is not set (scaleTemporalWorker.ts is started by temporalScaleBench.ts)`);
  return value;
};

/** Workflow tasks whose completion came after their timeout (10 s): a starved worker or server. */
let lateWorkflowTasks = 0;
/** Activity attempts after the first (a turn retried). */
let retriedAttempts = 0;
Runtime.install({
  logger: new DefaultLogger('WARN', (entry) => {
    if (entry.message.includes('Task not found when completing')) lateWorkflowTasks += 1;
    else if (entry.level === 'ERROR') console.error(entry.message, entry.meta ?? '');
  }),
  telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
});
/**
 * With SCALE_TRACE=<file>, one JSON line per turn attempt as this worker's activity code starts and
 * finishes it (pid, workflow id, activity id, attempt, scheduled and now in ms): a lost first attempt
 * is one the Temporal server recorded as started (`temporal workflow describe`: pendingActivities'
 * lastWorkerIdentity) that no worker's trace shows.
 */
function trace(info: Info, event: 'start' | 'done'): void {
  const file = process.env.SCALE_TRACE;
  if (file === undefined || file === '') return;
  const { workflowExecution, activityId, attempt, currentAttemptScheduledTimestampMs } = info;
  const line = { event, pid: process.pid, workflowId: workflowExecution?.workflowId, activityId, attempt };
  appendFileSync(
    file,
    `${JSON.stringify({ ...line, scheduled: currentAttemptScheduledTimestampMs, now: Date.now() })}\n`,
  );
}
const store = new MongoStore({ url: env('SCALE_MONGODB_URL') }, { dbName: env('SCALE_DB') });
await store.init();
const connection = await NativeConnection.connect({ address: env('SCALE_TEMPORAL_ADDRESS') });
const worker = await createBatonWorker({
  connection,
  taskQueue: env('SCALE_TASK_QUEUE'),
  workflow: scaleDesk(store, Number(env('SCALE_MODEL_LATENCY_MS'))),
  maxConcurrentTurns: Number(env('SCALE_MAX_TURNS')),
  // Counts retried turn attempts (a lost task, a heartbeat timeout): the bench prints them.
  interceptors: {
    activity: [
      (ctx) => ({
        inbound: {
          execute: async (input, next) => {
            if (ctx.info.attempt > 1) retriedAttempts += 1;
            trace(ctx.info, 'start');
            const result = await next(input);
            trace(ctx.info, 'done');
            return result;
          },
        },
      }),
    ],
  },
  workflowBundle: { codePath: env('SCALE_BUNDLE') },
});
process.on('message', (message: { kind: string }) => {
  if (message.kind === 'exit') worker.shutdown();
});
// A driver that died leaves no worker behind.
process.on('disconnect', () => process.exit(1));
process.send?.({ kind: 'ready', pid: process.pid });
await worker.run();
await connection.close();
await store.close();
process.send?.({ kind: 'late', lateWorkflowTasks, retriedAttempts }, () => process.exit(0));
