/**
 * A chaos child process: runs the customer on the trial's store until the session is closed, or
 * until the kill switch SIGKILLs it at point `CHAOS_KILL_AT`. Run by the campaign as
 * `node --import tsx --conditions=source test/chaos/chaosChild.ts` with `CHAOS_TRIAL` set.
 * Exit codes: 0 when the session is closed (stdout: `{"points":…,"retries":…}`), 2 on an error (stderr).
 */
import { chaosStore } from './chaosStore.js';
import { createChaosDesk } from './chaosDesk.js';
import { driveCustomer } from './customer.js';
import { KillSwitch } from './killSwitch.js';
import { SideLog } from './sideLog.js';
import { openTrialStore, type TrialConfig } from './trialConfig.js';

const trial = JSON.parse(process.env.CHAOS_TRIAL ?? '{}') as TrialConfig;
const killAt = Number(process.env.CHAOS_KILL_AT ?? 0);
const child = Number(process.env.CHAOS_CHILD ?? 0);
const log = new SideLog(trial.sideLog);
log.append({ t: 'child', pid: process.pid, child, killAt });
const kill = new KillSwitch({ killAt, labelsFile: trial.labelsFile, delaySeed: trial.delaySeed });
const store = await openTrialStore(trial.store);
try {
  const workflow = createChaosDesk(chaosStore(store, kill), { every: trial.every, keep: trial.keep }, { kill, log });
  const { retries } = await driveCustomer(workflow, { sessionId: trial.sessionId, userId: 'customer-1', every: trial.every }, { kill, log });
  log.append({ t: 'done', points: kill.count });
  process.stdout.write(`${JSON.stringify({ points: kill.count, retries })}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error)}\n`);
  process.exitCode = 2;
} finally {
  log.close();
  await store.close();
}
