/**
 * A worker process of the Temporal campaign: `@baton/temporal`'s worker serving the chaos desk on the
 * trial's MongoStore, with the campaign's kill points (store calls, tools, model calls) counted in
 * this process; it SIGKILLs itself at point `CHAOS_KILL_AT`. Every tool message the store accepts is
 * logged as `tool.result` (the result is committed: the tool must never run again). Run by the
 * campaign as `node --import tsx --conditions=source test/chaos/temporalWorkerChild.ts` with
 * `CHAOS_TRIAL` and `CHAOS_TEMPORAL` (`{ address, taskQueue, bundlePath }`); prints `ready` once polling.
 */
import type { Message, Store, StoreBatch } from '@baton/core';
import { createBatonWorker } from '@baton/temporal';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { openChildDesk, retryWhileUnreachable } from './openChildDesk.js';
import type { SideLog } from './sideLog.js';

const temporal = JSON.parse(process.env.CHAOS_TEMPORAL ?? '{}') as {
  address: string;
  taskQueue: string;
  bundlePath: string;
};
const killAt = Number(process.env.CHAOS_KILL_AT ?? 0);
const child = Number(process.env.CHAOS_CHILD ?? 0);
Runtime.install({ logger: new DefaultLogger('ERROR') });
const { workflow, log } = await openChildDesk({ killAt, child, wrapStore: loggedResults });
// Temporal may be down (the campaign may be restarting it): retried as a deployed worker's supervisor would.
const { value: connection } = await retryWhileUnreachable(
  () => NativeConnection.connect({ address: temporal.address }),
  () => 'TEMPORAL_UNAVAILABLE',
  log,
);
const worker = await createBatonWorker({
  connection,
  taskQueue: temporal.taskQueue,
  workflow,
  workflowBundle: { codePath: temporal.bundlePath },
  // A killed worker's branch lease expires soon after Temporal notices it (heartbeat timeout 2 s).
  leaseTtlMs: Number(process.env.CHAOS_LEASE_MS ?? 3_000),
});
process.stdout.write('ready\n');
await worker.run();

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
