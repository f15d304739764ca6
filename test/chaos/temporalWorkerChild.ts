/**
 * A worker process of the Temporal campaign: `@baton/temporal`'s worker serving the chaos desk on the
 * trial's MongoStore, with the campaign's kill points (store calls, tools, model calls) counted in
 * this process; it SIGKILLs itself at point `CHAOS_KILL_AT`. Every tool message the store accepts is
 * logged as `tool.result` (the result is committed: the tool must never run again). Run by the
 * campaign as `node --import tsx --conditions=source test/chaos/temporalWorkerChild.ts` with
 * `CHAOS_TRIAL` and `CHAOS_TEMPORAL` (`{ address, taskQueue, bundlePath }`); prints `ready` once polling.
 */
import { type Message, type Store, type StoreBatch, StoreError } from '@baton/core';
import { createBatonWorker } from '@baton/temporal';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createChaosDesk } from './chaosDesk.js';
import { chaosStore } from './chaosStore.js';
import { KillSwitch } from './killSwitch.js';
import { SideLog } from './sideLog.js';
import { openTrialStore, type TrialConfig } from './trialConfig.js';

const trial = JSON.parse(process.env.CHAOS_TRIAL ?? '{}') as TrialConfig;
const temporal = JSON.parse(process.env.CHAOS_TEMPORAL ?? '{}') as {
  address: string;
  taskQueue: string;
  bundlePath: string;
};
const killAt = Number(process.env.CHAOS_KILL_AT ?? 0);
const child = Number(process.env.CHAOS_CHILD ?? 0);
Runtime.install({ logger: new DefaultLogger('ERROR') });
const log = new SideLog(trial.sideLog);
log.append({ t: 'child', pid: process.pid, child, killAt });
const kill = new KillSwitch({ killAt, labelsFile: trial.labelsFile, delaySeed: trial.delaySeed });
const store = await openStore();
const workflow = createChaosDesk(
  chaosStore(loggedResults(store, log), kill),
  { every: trial.every, keep: trial.keep },
  { kill, log },
  trial.window,
);
const connection = await connect();
const worker = await createBatonWorker({
  connection,
  taskQueue: temporal.taskQueue,
  workflow,
  workflowBundle: { codePath: temporal.bundlePath },
});
process.stdout.write('ready\n');
await worker.run();

/** Opens the store, retrying for up to 60 s while the database is unreachable. */
async function openStore(): Promise<Store> {
  const since = Date.now();
  for (;;) {
    try {
      return await openTrialStore(trial.store);
    } catch (error) {
      if (!(error instanceof StoreError) || Date.now() - since > 60_000) throw error;
      log.append({ t: 'retry', code: error.code, message: error.message.slice(0, 200) });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Connects to Temporal, retrying for up to 60 s while the server is down (the campaign may be restarting it), as a deployed worker's supervisor would. */
async function connect(): Promise<NativeConnection> {
  const since = Date.now();
  for (;;) {
    try {
      return await NativeConnection.connect({ address: temporal.address });
    } catch (error) {
      if (Date.now() - since > 60_000) throw error;
      log.append({ t: 'retry', code: 'TEMPORAL_UNAVAILABLE', message: String(error).slice(0, 200) });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** `store`, logging a `tool.result` for each tool message once `appendMessages` or `writeBatch` stored it. */
function loggedResults(inner: Store, sideLog: SideLog): Store {
  const logTools = (messages: readonly Message[] | undefined) => {
    for (const m of messages ?? []) {
      if (m.role === 'tool' && m.toolCallId !== undefined)
        sideLog.append({ t: 'tool.result', toolCallId: m.toolCallId, agent: m.agent ?? '', tool: m.toolName ?? '' });
    }
  };
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'appendMessages') {
        return async (...args: Parameters<Store['appendMessages']>) => {
          const result = await inner.appendMessages(...args);
          logTools(args[2]);
          return result;
        };
      }
      if (property === 'writeBatch') {
        return async (batch: StoreBatch) => {
          const result = await value.call(target, batch);
          logTools(batch.messages);
          return result;
        };
      }
      return value.bind(target);
    },
  });
}
