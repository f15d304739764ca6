/**
 * A server replica of the `--replicas` campaign: the chaos desk served by `createBatonApp` (with the
 * reconciler) on the trial's store, on 127.0.0.1. Its store calls that write, its tools and its model
 * calls pass kill points (`killAt` of its orders); reads and lease renewals do not (a follower's polling would
 * make the count depend on timing). Prints `READY <url>` once it serves.
 * Run as `node --import tsx --conditions=source test/chaos/replicaServerChild.ts` with `CHAOS_TRIAL`,
 * `CHAOS_LEASE_MS` and `CHAOS_RECONCILE_MS` set. It loads its modules, then waits as a standby for
 * its orders, one JSON line on stdin (`ReplicaOrders`): a killed replica's place is taken in
 * milliseconds, not in the seconds a cold start takes.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type Store, StoreError } from '@baton/core';
import { createBatonApp } from '@baton/server';
import { serveBaton } from '@baton/server/node';
import { createChaosDesk } from './chaosDesk.js';
import { chaosStore } from './chaosStore.js';
import { KillSwitch } from './killSwitch.js';
import { SideLog } from './sideLog.js';
import { openTrialStore, type TrialConfig } from './trialConfig.js';

/** What a standby replica is told when it takes a slot. */
export interface ReplicaOrders {
  /** The kill point it dies at (0: none). */
  killAt: number;
  /** Its number among the trial's replica processes, for the side log. */
  child: number;
  /** The slot's port (0: any). */
  port: number;
  /** Where it appends the label of each kill point (the uninterrupted runs). */
  labelsFile?: string;
}

const lines = createInterface({ input: process.stdin });
const [line] = (await once(lines, 'line')) as [string];
lines.close();
const { killAt, child, port, labelsFile } = JSON.parse(line) as ReplicaOrders;
const trial = JSON.parse(process.env.CHAOS_TRIAL ?? '{}') as TrialConfig;
const log = new SideLog(trial.sideLog);
log.append({ t: 'child', pid: process.pid, child, killAt });
const kill = new KillSwitch({ killAt, labelsFile, delaySeed: trial.delaySeed });
const store = await openStore();
const readsOnly = (method: string) => /^(get|read|list|load|find)/.test(method) || method === 'renewBranchLease';
const workflow = createChaosDesk(
  chaosStore(store, kill, readsOnly),
  { every: trial.every, keep: trial.keep },
  { kill, log },
  trial.window,
);
const app = createBatonApp({
  workflow,
  events: { leaseTtlMs: Number(process.env.CHAOS_LEASE_MS ?? 1_000), pollMs: 25 },
  reconcile: { intervalMs: Number(process.env.CHAOS_RECONCILE_MS ?? 250) },
});
const served = await serveBaton(app, { port });
process.stdout.write(`READY ${served.url}\n`);

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
