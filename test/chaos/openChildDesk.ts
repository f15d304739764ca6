/**
 * What every process of a trial does first (the process runner's child, a server replica, a Temporal
 * worker): read its trial from `CHAOS_TRIAL`, open the side log and the kill switch, open the store
 * (retrying while the database is down) and build the chaos desk on it with kill points.
 */
import { type Store, StoreError } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import { createChaosDesk } from './chaosDesk.js';
import { chaosStore } from './chaosStore.js';
import { KillSwitch } from './killSwitch.js';
import { SideLog } from './sideLog.js';
import { openTrialStore, type TrialConfig } from './trialConfig.js';

/** How long a process waits for its database or server to come back (the campaign may be restarting it). */
const UNREACHABLE_FOR_MS = 60_000;

/** Which process of the trial this is. */
export interface ChildOrders {
  /** The kill point it dies at (0: none). */
  killAt: number;
  /** Its number among the trial's processes, for the side log. */
  child: number;
  /** Where it appends the label of each kill point it passes (default: the trial's `labelsFile`). */
  labelsFile?: string | undefined;
  /** Store methods that pass no kill point (see `chaosStore`). */
  uncounted?: (method: string) => boolean;
  /** Wraps the store under the kill points (e.g. to log what it stored). */
  wrapStore?: (store: Store, log: SideLog) => Store;
}

/** A process's trial, side log, kill switch, store and desk. */
export interface ChildDesk {
  trial: TrialConfig;
  log: SideLog;
  kill: KillSwitch;
  /** The store as opened (no kill points): for reads outside the conversation, and to close. */
  store: Store;
  workflow: HandoffWorkflow;
  /** Times the store could not be opened yet. */
  openRetries: number;
}

/**
 * Sets up a trial's process from `CHAOS_TRIAL` and `orders`; logs a `child` record first.
 * @throws {StoreError} when the store stays unreachable for 60 s
 * @example
 * ```ts
 * const { workflow, log, store } = await openChildDesk({ killAt: 37, child: 0 });
 * ```
 */
export async function openChildDesk(orders: ChildOrders): Promise<ChildDesk> {
  const { killAt, child } = orders;
  const trial = JSON.parse(process.env.CHAOS_TRIAL ?? '{}') as TrialConfig;
  const log = new SideLog(trial.sideLog);
  log.append({ t: 'child', pid: process.pid, child, killAt });
  const labelsFile = orders.labelsFile ?? trial.labelsFile;
  const kill = new KillSwitch({ killAt, labelsFile, delaySeed: trial.delaySeed });
  const opened = await retryWhileUnreachable(
    () => openTrialStore(trial.store),
    (error) => (error instanceof StoreError ? error.code : undefined),
    log,
  );
  const inner = orders.wrapStore?.(opened.value, log) ?? opened.value;
  const workflow = createChaosDesk(
    chaosStore(inner, kill, orders.uncounted),
    { every: trial.every, keep: trial.keep },
    { kill, log },
    trial.window,
  );
  return { trial, log, kill, store: opened.value, workflow, openRetries: opened.retries };
}

/**
 * Calls `open` until it succeeds, every 250 ms for up to 60 s while `retryCode` names its error
 * (each retry logged with that code); an error it does not name is thrown at once.
 * @example
 * ```ts
 * const { value: connection } = await retryWhileUnreachable(() => NativeConnection.connect({ address }), () => 'TEMPORAL_UNAVAILABLE', log);
 * ```
 */
export async function retryWhileUnreachable<T>(
  open: () => Promise<T>,
  retryCode: (error: unknown) => string | undefined,
  log: SideLog,
): Promise<{ value: T; retries: number }> {
  const since = Date.now();
  for (let retries = 0; ; retries += 1) {
    try {
      return { value: await open(), retries };
    } catch (error) {
      const code = retryCode(error);
      if (code === undefined || Date.now() - since > UNREACHABLE_FOR_MS) throw error;
      const message = error instanceof Error ? error.message : String(error);
      log.append({ t: 'retry', code, message: message.slice(0, 200) });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
