/**
 * A Baton Temporal worker in its own process (the crash test SIGKILLs it mid-turn).
 * Usage: workerChild.ts <temporalAddress> <taskQueue> <mongoUrl> <database> <who> <logFile> <bundlePath> [hang]
 * Prints `ready` once polling, and `look_up_order started` when that tool starts.
 */
import { EpisodicMemory } from '@baton/memory';
import { MongoStore } from '@baton/store-mongo';
import { createBatonWorker } from '@baton/temporal';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { temporalDesk } from './temporalDesk.js';

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
const worker = await createBatonWorker({ connection, taskQueue, workflow, workflowBundle: { codePath: bundlePath } });
process.stdout.write('ready\n');
await worker.run();
