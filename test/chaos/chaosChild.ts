/**
 * A chaos child process: runs the customer on the trial's store until the session is closed, or
 * until the kill switch SIGKILLs it at point `CHAOS_KILL_AT`. Run by the campaign as
 * `node --import tsx --conditions=source test/chaos/chaosChild.ts` with `CHAOS_TRIAL` set.
 * A store that cannot be reached yet is retried (up to 60 s), like the customer's calls.
 * Exit codes: 0 when the session is closed (stdout: `{"points":…,"retries":…}`), 2 on an error (stderr).
 */
import { driveCustomer } from './customer.js';
import { openChildDesk } from './openChildDesk.js';

const killAt = Number(process.env.CHAOS_KILL_AT ?? 0);
const child = Number(process.env.CHAOS_CHILD ?? 0);
const { trial, log, kill, store, workflow, openRetries } = await openChildDesk({ killAt, child });
try {
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
