/**
 * A trial's workspace, as the parent of its processes sees it: a fresh folder under the campaign's
 * work folder, the trial's store (a FileStore folder in it, or a database of its own on the campaign's
 * FerretDB) and the `TrialConfig` its children are given. After judging, a trial that broke an
 * invariant keeps its data for inspection; a clean one is removed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type { FerretServer } from './ferretServer.js';
import type { TrialPlan, TrialResult } from './runTrial.js';
import { openTrialStore, type TrialConfig, type TrialStore } from './trialConfig.js';

/** The conversation's session id in the process and replica trials (a Temporal trial has its own per trial). */
export const SESSION_ID = 'chaos-chat';

/** Where trials live: the campaign's work folder and, for MongoStore trials, its FerretDB. */
export interface WorkspaceEnvironment {
  workDir: string;
  ferret?: FerretServer | undefined;
}

/** How a runner wants its trial's config. */
export interface WorkspaceOptions {
  /** The session id for the trial named `name` (default: `SESSION_ID` for every trial). */
  sessionIdOf?: (name: string) => string;
  /** Whether `plan.labels` puts one `labels.txt` in the config (default true; the replicas keep one per slot). */
  sharedLabels?: boolean;
}

/** A trial's folder, store and config. */
export interface TrialWorkspace {
  /** `t-<10 hex digits>`, unique in the campaign. */
  name: string;
  dir: string;
  store: TrialStore;
  trial: TrialConfig;
}

/**
 * Creates the trial's folder and config; for a MongoStore trial, creates its collections and indexes
 * while FerretDB is up.
 * @throws {Error} when the plan wants MongoDB and the environment has no FerretDB
 * @example
 * ```ts
 * const { dir, store, trial } = await openTrialWorkspace(plan, { workDir, ferret });
 * ```
 */
export async function openTrialWorkspace(
  plan: TrialPlan,
  env: WorkspaceEnvironment,
  options: WorkspaceOptions = {},
): Promise<TrialWorkspace> {
  const name = `t-${randomBytes(5).toString('hex')}`;
  const dir = join(env.workDir, name);
  await mkdir(dir, { recursive: true });
  const store: TrialStore =
    plan.store === 'file'
      ? { kind: 'file', directory: join(dir, 'store') }
      : { kind: 'mongo', url: ferretOf(env).url, dbName: `chaos_${name.replace('-', '_')}` };
  const trial: TrialConfig = {
    store,
    every: plan.every,
    keep: plan.keep,
    sessionId: options.sessionIdOf?.(name) ?? SESSION_ID,
    sideLog: join(dir, 'side.jsonl'),
  };
  if (plan.labels && options.sharedLabels !== false) trial.labelsFile = join(dir, 'labels.txt');
  if (plan.delaySeed !== undefined) trial.delaySeed = plan.delaySeed;
  if (plan.window !== undefined) trial.window = plan.window;
  // FerretDB 1.24 killed while it creates a collection keeps the SQLite table but not its metadata, and every
  // later createIndexes on that database fails ("table … already exists"): create the trial's collections
  // and indexes before any restart can happen, with no restart under way.
  if (store.kind === 'mongo') await ferretOf(env).whileUp(async () => (await openTrialStore(store)).close());
  return { name, dir, store, trial };
}

/**
 * Ends the workspace of a judged trial: with violations, writes `report` (default: plan and violations)
 * to `plan.json` and returns `result` with `keptAt`; without, deletes the folder and the database.
 * @example
 * ```ts
 * return closeTrialWorkspace(workspace, result);
 * ```
 */
export async function closeTrialWorkspace(
  workspace: TrialWorkspace,
  result: TrialResult,
  report: object = { plan: result.plan, violations: result.violations },
): Promise<TrialResult> {
  const { dir, store } = workspace;
  if (result.violations.length > 0) {
    await writeFile(join(dir, 'plan.json'), JSON.stringify(report, null, 2));
    return { ...result, keptAt: store.kind === 'file' ? dir : `${dir} and database ${store.dbName}` };
  }
  await rm(dir, { recursive: true, force: true });
  // Another trial may be restarting the shared FerretDB: one more try, then the database is left behind.
  if (store.kind === 'mongo') await dropDatabase(store).catch(() => dropDatabase(store).catch(() => {}));
  return result;
}

function ferretOf(env: WorkspaceEnvironment): FerretServer {
  if (env.ferret === undefined) throw new Error('A MongoStore trial needs the campaign FerretDB.');
  return env.ferret;
}

async function dropDatabase(store: Extract<TrialStore, { kind: 'mongo' }>): Promise<void> {
  const client = new MongoClient(store.url, { serverSelectionTimeoutMS: 15_000 });
  try {
    await client.db(store.dbName).dropDatabase();
  } finally {
    await client.close();
  }
}
