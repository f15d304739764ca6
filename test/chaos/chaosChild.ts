/**
 * A chaos child process: runs the customer on the trial's store until the session is closed, or
 * until the kill switch SIGKILLs it at point `CHAOS_KILL_AT`. Run by the campaign as
 * `node --import tsx --conditions=source test/chaos/chaosChild.ts` with `CHAOS_TRIAL` set.
 * A store that cannot be reached yet is retried (up to 60 s), like the customer's calls.
 * Exit codes: 0 when the session is closed (stdout: `{"points":…,"retries":…}`), 2 on an error (stderr).
 */
import { type Store, StoreError } from '@baton/core';
import { createChaosDesk } from './chaosDesk.js';
import { chaosStore } from './chaosStore.js';
import { driveCustomer } from './customer.js';
import { KillSwitch } from './killSwitch.js';
import { SideLog } from './sideLog.js';
import { openTrialStore, type TrialConfig } from './trialConfig.js';

const trial = JSON.parse(process.env.CHAOS_TRIAL ?? '{}') as TrialConfig;
const killAt = Number(process.env.CHAOS_KILL_AT ?? 0);
const child = Number(process.env.CHAOS_CHILD ?? 0);
const log = new SideLog(trial.sideLog);
log.append({ t: 'child', pid: process.pid, child, killAt });
let openRetries = 0;
const kill = new KillSwitch({ killAt, labelsFile: trial.labelsFile, delaySeed: trial.delaySeed });
const store = await openStore();
try {
  const workflow = createChaosDesk(
    chaosStore(store, kill),
    { every: trial.every, keep: trial.keep },
    { kill, log },
    trial.window,
  );
  // With a window a session holds only the newest messages: the customer counts what it sent on the whole branch (read without kill points).
  const readBranch = () => store.readMessages(trial.sessionId, 'main');
  const { retries: driveRetries } = await driveCustomer(
    workflow,
    { sessionId: trial.sessionId, userId: 'customer-1', every: trial.every, readBranch },
    { kill, log },
  );
  const retries = openRetries + driveRetries;
  log.append({ t: 'done', points: kill.count });
  process.stdout.write(`${JSON.stringify({ points: kill.count, retries })}\n`);
} catch (error) {
  process.stderr.write(
    `${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error)}\n`,
  );
  process.exitCode = 2;
} finally {
  log.close();
  await store.close();
}

/** Opens the store, retrying for up to 60 s while the database is unreachable (the campaign may be restarting FerretDB). */
async function openStore(): Promise<Store> {
  const since = Date.now();
  for (;;) {
    try {
      return await openTrialStore(trial.store);
    } catch (error) {
      if (!(error instanceof StoreError) || Date.now() - since > 60_000) throw error;
      openRetries += 1;
      log.append({ t: 'retry', code: error.code, message: error.message.slice(0, 200) });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
