/**
 * A Baton Temporal worker in its own process (the crash tests SIGKILL it mid-turn).
 * Usage: workerChild.ts <temporalAddress> <taskQueue> <mongoUrl> <database> <who> <logFile> <bundlePath> [hang|hang-after-commit]
 * Prints `ready` once polling, and `look_up_order started` when that tool starts. `hang`: that tool
 * never finishes here; `hang-after-commit`: the turn activity runs to its end (every message and the
 * checkpoint stored, the result read back) and then never reports its completion to Temporal,
 * printing `turn committed` instead (a worker killed between the turn's last write and the completion).
 */
import { EpisodicMemory } from '@baton/memory';
import { MongoStore } from '@baton/store-mongo';
import { createBatonWorker } from '@baton/temporal';
import type { Context } from '@temporalio/activity';
import { type ActivityInterceptors, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { temporalDesk } from './temporalDesk.js';

/** Holds every finished `batonTurn` attempt forever, after it returned, so its completion never reaches Temporal. */
function holdCompletedTurns(ctx: Context): ActivityInterceptors {
  return {
    inbound: {
      execute: async (input, next) => {
        const result = await next(input);
        if (ctx.info.activityType !== 'batonTurn') return result;
        process.stdout.write('turn committed\n');
        return new Promise(() => {});
      },
    },
  };
}

const [address, taskQueue, mongoUrl, database, who, logFile, bundlePath, hang] = process.argv.slice(2);
if (
  address === undefined ||
  taskQueue === undefined ||
  mongoUrl === undefined ||
  database === undefined ||
  who === undefined ||
  logFile === undefined ||
  bundlePath === undefined
) {
  throw new Error(
    'usage: workerChild.ts <temporalAddress> <taskQueue> <mongoUrl> <database> <who> <logFile> <bundlePath> [hang]',
  );
}
Runtime.install({ logger: new DefaultLogger('ERROR') });
const store = new MongoStore({ url: mongoUrl }, { dbName: database });
await store.init();
const onLookUp = () => process.stdout.write('look_up_order started\n');
const workflow = temporalDesk(store, { who, logFile, hang: hang === 'hang', onLookUp, memory: new EpisodicMemory() });
const connection = await NativeConnection.connect({ address });
const worker = await createBatonWorker({
  connection,
  taskQueue,
  workflow,
  workflowBundle: { codePath: bundlePath },
  leaseTtlMs: 4_000, // a killed worker's branch lease expires soon after Temporal notices (heartbeat timeout 2 s)
  ...(hang === 'hang-after-commit' ? { interceptors: { activity: [holdCompletedTurns] } } : {}),
});
process.stdout.write('ready\n');
await worker.run();
