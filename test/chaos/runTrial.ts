/**
 * Runs one chaos trial: children one after another (each but the last killed at its kill point, the
 * later ones recovering), optionally a FerretDB SIGKILL + restart during one of them, then the oracle
 * on what a fresh store object reads. A trial that breaks an invariant keeps its data for inspection.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointFrequency, CheckpointKeep } from '@baton/handoff';
import { MongoClient } from 'mongodb';
import { sealLogRecord } from '../support/sealLogRecord.js';
import type { FerretServer } from './ferretServer.js';
import type { TranscriptEntry, Violation } from './oracle.js';
import { runChild } from './runChild.js';
import type { TrialStore } from './trialConfig.js';
import { judgeStore, readLabels, retriesByCode } from './trialEvidence.js';
import { closeTrialWorkspace, openTrialWorkspace, SESSION_ID } from './trialWorkspace.js';

export { SESSION_ID } from './trialWorkspace.js';

/** What one trial does. */
export interface TrialPlan {
  /** For reports, e.g. `random seed 17` or `exhaustive file/step k=37`. */
  label: string;
  /** The command-line arguments that replay this trial. */
  replay: string;
  store: 'file' | 'mongo';
  every: CheckpointFrequency;
  keep: CheckpointKeep;
  /** The kill point of each child in turn; the child after the last one runs to the end. */
  kills: number[];
  delaySeed?: number;
  /** The parent SIGKILLs child `child` `afterMs` after starting it (a kill that can land inside a store call). */
  timedKill?: { child: number; afterMs: number };
  /** SIGKILL and restart FerretDB `afterMs` after child `child` starts (MongoStore trials). */
  bounce?: { child: number; afterMs: number };
  /** Record the label of every kill point (the uninterrupted reference runs). */
  labels?: boolean;
  /** Self-test: delete the stored message at seq 3 before the oracle looks. */
  damage?: boolean;
  /** The desk's `historyWindow({ messages })` (the campaign's `--window`). */
  window?: number;
}

/** What a trial found. */
export interface TrialResult {
  plan: TrialPlan;
  violations: Violation[];
  /** Children that died at their kill point. */
  crashes: number;
  /** ConcurrencyError / StoreError retries of all the trial's children (from the side log). */
  retries: number;
  /** Kill points the last child passed (all of them in an uninterrupted run). */
  points: number;
  /** How long the last child ran, in ms. */
  lastChildMs: number;
  /** The label of each kill point (with `plan.labels`). */
  labels: string[];
  transcript: TranscriptEntry[];
  /** Where the trial's data was kept (when it broke an invariant). */
  keptAt?: string;
  /** Retries by their side log code (replica trials: `HTTP_409`, `DROPPED`, `CUT_TURN_NOT_RESUMED`). */
  retryCodes?: Record<string, number>;
}

/** What trials share: a work folder and, for MongoStore trials, the campaign's FerretDB. */
export interface TrialEnvironment {
  workDir: string;
  ferret?: FerretServer | undefined;
  /** Stops the trial: no further child starts, a running one is SIGKILLed. */
  signal?: AbortSignal | undefined;
}

/**
 * Runs a trial to its end and judges it.
 *
 * @param reference the uninterrupted run's transcript; without one the trial is its own reference
 * @example
 * ```ts
 * const result = await runTrial({ label: 'k=3', replay: '', store: 'file', every: 'step', keep: 'latest', kills: [3] }, env, reference);
 * ```
 */
export async function runTrial(
  plan: TrialPlan,
  env: TrialEnvironment,
  reference?: readonly TranscriptEntry[],
): Promise<TrialResult> {
  const workspace = await openTrialWorkspace(plan, env);
  const { dir, store, trial } = workspace;
  const violations: Violation[] = [];
  let crashes = 0;
  let points = 0;
  let lastChildMs = 0;
  for (let child = 0; child < plan.kills.length + 4; child += 1) {
    env.signal?.throwIfAborted();
    const killAt = plan.kills[child] ?? 0;
    const bounce =
      plan.bounce?.child === child && env.ferret ? delayed(plan.bounce.afterMs, () => env.ferret?.bounce()) : undefined;
    const timed = plan.timedKill?.child === child ? plan.timedKill.afterMs : undefined;
    const outcome = await runChild(trial, killAt, child, timed, undefined, env.signal);
    await bounce;
    if (outcome.kind === 'killed' && (killAt > 0 || timed !== undefined)) {
      crashes += 1;
      continue;
    }
    if (outcome.kind === 'closed') {
      points = outcome.points;
      lastChildMs = outcome.durationMs;
      break;
    }
    violations.push({
      invariant: 'child-error',
      detail: outcome.kind === 'error' ? outcome.message : `child ${child} was killed without a kill point`,
    });
    break;
  }

  if (plan.damage) await deleteThirdMessage(store);
  // Another trial may be restarting the shared FerretDB right now: give the reader a few tries.
  const verdict = await judgeStore(trial, reference, store.kind === 'mongo' ? 10 : 1);
  violations.push(...verdict.violations);
  // Retries of every child, killed ones included.
  const retries = Object.values(retriesByCode(trial.sideLog)).reduce((a, b) => a + b, 0);
  const labels = plan.labels ? await readLabels(join(dir, 'labels.txt')) : [];
  const { transcript } = verdict;
  return closeTrialWorkspace(workspace, {
    plan,
    violations,
    crashes,
    retries,
    points,
    lastChildMs,
    labels,
    transcript,
  });
}

async function delayed(ms: number, action: () => Promise<void> | undefined): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  await action();
}

/**
 * The self-test's damage: the stored message at seq 3 disappears (from the FileStore's session log,
 * the later messages of `main` moving down one seq so the log still reads; a MongoDB document).
 */
async function deleteThirdMessage(store: TrialStore): Promise<void> {
  if (store.kind === 'file') {
    const path = join(store.directory, 'sessions', SESSION_ID, 'log.jsonl');
    const [header, ...lines] = (await readFile(path, 'utf8')).trimEnd().split('\n');
    let found = false;
    const damaged = lines.map((line) => {
      const record = JSON.parse(line) as { ops: { op: string; branchId?: string; messages?: { seq: number }[] }[] };
      for (const op of record.ops) {
        if (op.op !== 'messages' || op.branchId !== 'main') continue;
        found ||= op.messages!.some((m) => m.seq === 3);
        op.messages = op.messages!.filter((m) => m.seq !== 3).map((m) => (m.seq > 3 ? { ...m, seq: m.seq - 1 } : m));
      }
      return sealLogRecord(JSON.stringify({ ops: record.ops })); // sealed again: a missing message, not a damaged record
    });
    if (!found) throw new Error(`No message at seq 3 in ${path}: the self-test cannot damage it.`);
    await writeFile(`${path}.damaged`, `${[header, ...damaged].join('\n')}\n`);
    await rename(`${path}.damaged`, path);
    return;
  }
  const client = new MongoClient(store.url);
  try {
    const { deletedCount } = await client
      .db(store.dbName)
      .collection('baton_messages')
      .deleteOne({ sessionId: SESSION_ID, seq: 3 });
    if (deletedCount !== 1) throw new Error('No message document at seq 3: the self-test cannot damage it.');
  } finally {
    await client.close();
  }
}
