/**
 * One Temporal worker of temporalScaleBench.ts, in its own process: serves the scale desk's session
 * workflows and turns (test/bench/scale/scaleDesk.ts, each model call delayed by
 * SCALE_MODEL_LATENCY_MS) from task queue SCALE_TASK_QUEUE, at most SCALE_MAX_TURNS turns at once,
 * with MongoStore on SCALE_MONGODB_URL / SCALE_DB. Says `{ kind: 'ready', pid }` over IPC; exits on `{ kind: 'exit' }`.
 */
import { MongoStore } from '@baton/store-mongo';
import { createBatonWorker } from '@baton/temporal';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { scaleDesk } from '../../../test/bench/scale/scaleDesk.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '')
    throw new Error(`${name} is not set (scaleTemporalWorker.ts is started by temporalScaleBench.ts)`);
  return value;
};

Runtime.install({ logger: new DefaultLogger('ERROR') });
const store = new MongoStore({ url: env('SCALE_MONGODB_URL') }, { dbName: env('SCALE_DB') });
await store.init();
const connection = await NativeConnection.connect({ address: env('SCALE_TEMPORAL_ADDRESS') });
const worker = await createBatonWorker({
  connection,
  taskQueue: env('SCALE_TASK_QUEUE'),
  workflow: scaleDesk(store, Number(env('SCALE_MODEL_LATENCY_MS'))),
  maxConcurrentTurns: Number(env('SCALE_MAX_TURNS')),
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
process.exit(0);
