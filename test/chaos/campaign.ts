/**
 * The crash campaign: uninterrupted reference runs per (store, mode), the optional self-test, then
 * exhaustive and/or random trials, two at a time, each judged by the oracle; prints each failure
 * (seed or kill points, the violated invariant, a diff) and returns a summary.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointFrequency } from '@baton/handoff';
import { type FerretServer, startFerretServer } from './ferretServer.js';
import type { Invariant, TranscriptEntry } from './oracle.js';
import { runTrial, type TrialPlan, type TrialResult } from './runTrial.js';
import { defaultKeep, exhaustivePlans, fixedPlan, pairKey, randomPlan, type StoreKind } from './trialPlans.js';
import { emptySummary, settleReferences, windowed } from './trialRecord.js';

/** What a campaign runs. */
export interface CampaignOptions {
  stores: StoreKind[];
  modes: CheckpointFrequency[];
  /** One crash at every kill point of each (store, mode). */
  exhaustive: boolean;
  /** Random trials (seeds `seed`, `seed + 1`, …). */
  trials: number;
  seed: number;
  /** Replay only the random trial of this seed. */
  replaySeed?: number | undefined;
  /** Replay only trials with these kill points (one per child). */
  killAt?: number[] | undefined;
  /** Damage a clean run per store and require the oracle to notice. */
  selfTest: boolean;
  /** The desk's `historyWindow({ messages })` in every run (references included); none: the whole history. */
  window?: number | undefined;
  /** `'temporal'`: the conversation runs on `@baton/temporal` worker processes (see temporalRunner.ts); default `'process'`. */
  runner?: 'process' | 'temporal' | undefined;
  /** Server replicas per trial: the conversation runs over HTTP on that many `@baton/server` processes (see replicaRunner.ts). */
  replicas?: number | undefined;
  /** Trials at once (at most 2: the machine has 2 cores). */
  concurrency?: number;
  /** Where progress and failures go (default: stdout). */
  print?: (line: string) => void;
  /**
   * Stops the campaign (a test's timeout): no further trial starts, running children are SIGKILLed,
   * its FerretDB is stopped, and runCampaign rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

/** What a campaign found. */
export interface CampaignSummary {
  trials: number;
  crashes: number;
  retries: number;
  ferretBounces: number;
  /** Temporal server SIGKILLs + restarts (`runner: 'temporal'`). */
  temporalRestarts?: number;
  /** Kill points of the uninterrupted run, per `store/mode`. */
  killPoints: Record<string, number>;
  violations: Record<Invariant, number>;
  /** Trials that broke an invariant. */
  failures: TrialResult[];
  /** Per store: whether the oracle caught the self-test's deleted message. */
  selfTest: Array<{ store: StoreKind; caught: boolean; invariants: Invariant[] }>;
  wallMs: number;
}

/**
 * Runs a campaign.
 *
 * @example
 * ```ts
 * const summary = await runCampaign({ stores: ['file'], modes: ['step'], exhaustive: false, trials: 20, seed: 1, selfTest: true });
 * if (Object.values(summary.violations).some((n) => n > 0)) process.exitCode = 1;
 * ```
 */
export async function runCampaign(options: CampaignOptions): Promise<CampaignSummary> {
  if (options.runner === 'temporal') return (await import('./temporalRunner.js')).runTemporalCampaign(options);
  if (options.replicas !== undefined) return (await import('./replicaRunner.js')).runReplicaCampaign(options);
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'baton-chaos-'));
  const ferret: FerretServer | undefined = options.stores.includes('mongo') ? await startFerretServer() : undefined;
  const summary = emptySummary();
  const env = { workDir, ferret, signal: options.signal };
  try {
    // Uninterrupted reference runs: kill points, their labels, the transcript every trial must end with.
    const pairs = options.stores.flatMap((store) => options.modes.map((every) => ({ store, every })));
    const references = new Map<string, TrialResult>();
    const referencePlans = pairs.map(
      ({ store, every }): TrialPlan =>
        windowed({ ...fixedPlan(store, every, [], 'reference'), labels: true }, options.window),
    );
    for (const result of await pool(referencePlans, 2, (plan) => runTrial(plan, env), options.signal))
      references.set(pairKey(result.plan.store, result.plan.every), result);
    const first = settleReferences(summary, references.values(), (result) =>
      record(summary, result, references, print),
    );
    print(
      `reference runs: ${[...references].map(([key, r]) => `${key} ${r.points} points in ${r.lastChildMs} ms`).join(', ')}`,
    );
    const reference: readonly TranscriptEntry[] = first.transcript;

    if (options.selfTest) {
      for (const store of options.stores) {
        const result = await runTrial(
          windowed({ ...fixedPlan(store, options.modes[0] ?? 'turn', [], 'self-test'), damage: true }, options.window),
          env,
          reference,
        );
        const invariants = [...new Set(result.violations.map((v) => v.invariant))];
        summary.selfTest.push({ store, caught: invariants.length > 0, invariants });
        print(
          `self-test ${store}: deleted the stored message at seq 3; the oracle ${invariants.length > 0 ? `reported ${invariants.join(', ')}` : 'reported NOTHING'}`,
        );
      }
    }

    const points = new Map(Object.entries(summary.killPoints));
    const durations = new Map([...references].map(([key, result]) => [key, result.lastChildMs]));
    const plans: TrialPlan[] = [];
    if (options.killAt !== undefined)
      plans.push(...pairs.map(({ store, every }) => fixedPlan(store, every, options.killAt ?? [])));
    else if (options.replaySeed !== undefined)
      plans.push(randomPlan(options.replaySeed, options.stores, options.modes, points, durations));
    else {
      if (options.exhaustive)
        for (const { store, every } of pairs)
          plans.push(...exhaustivePlans(store, every, points.get(pairKey(store, every)) ?? 0));
      for (let i = 0; i < options.trials; i += 1)
        plans.push(randomPlan(options.seed + i, options.stores, options.modes, points, durations));
    }
    for (const plan of plans) windowed(plan, options.window);
    print(
      `running ${plans.length} trials, ${Math.min(2, options.concurrency ?? 2)} at a time (seed ${options.seed}; modes ${options.modes.join(', ')}; stores ${options.stores.join(', ')}; default retention ${options.modes.map((m) => `${m} ${JSON.stringify(defaultKeep(m))}`).join(', ')}${options.window === undefined ? '' : `; historyWindow ${options.window} messages`})`,
    );
    let done = 0;
    await pool(
      plans,
      Math.min(2, options.concurrency ?? 2),
      async (plan) => {
        const result = await runTrial(plan, env, reference);
        record(summary, result, references, print);
        done += 1;
        if (done % 25 === 0)
          print(
            `  ${done}/${plans.length} trials, ${summary.failures.length} failing, ${Math.round((Date.now() - started) / 1000)} s`,
          );
        return result;
      },
      options.signal,
    );
  } finally {
    summary.ferretBounces = ferret?.bounces ?? 0;
    await ferret?.close();
    if (summary.failures.length === 0) await rm(workDir, { recursive: true, force: true });
    summary.wallMs = Date.now() - started;
  }
  return summary;
}

/** Counts `result` into `summary`; a failed trial is printed with the label of its first kill point and its FerretDB restart. */
function record(
  summary: CampaignSummary,
  result: TrialResult,
  references: ReadonlyMap<string, TrialResult>,
  print: (line: string) => void,
): void {
  summary.trials += 1;
  summary.crashes += result.crashes;
  summary.retries += result.retries;
  if (result.violations.length === 0) return;
  summary.failures.push(result);
  const labels = references.get(pairKey(result.plan.store, result.plan.every))?.labels ?? [];
  const firstKill = result.plan.kills[0];
  const where = firstKill === undefined ? '' : ` (first kill at point ${firstKill}: ${labels[firstKill - 1] ?? '?'})`;
  print(
    `FAIL ${result.plan.label}${where}${result.plan.bounce ? `, FerretDB restarted ${result.plan.bounce.afterMs} ms into child ${result.plan.bounce.child}` : ''}`,
  );
  print(
    `  replay: npx --yes pnpm@10.34.8 chaos ${result.plan.replay}${result.keptAt ? `; data kept in ${result.keptAt}` : ''}`,
  );
  for (const violation of result.violations) {
    summary.violations[violation.invariant] += 1;
    print(`  [${violation.invariant}] ${violation.detail.replaceAll('\n', '\n    ')}`);
  }
}

/** Runs `work` over `items` with at most `size` at once; results in input order. */
async function pool<T, R>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}

/**
 * The summary as printed at the end: trials, crashes, kill points, modes, stores, violations per invariant, wall time.
 * @example
 * ```ts
 * console.log(formatSummary(summary, options));
 * ```
 */
export function formatSummary(summary: CampaignSummary, options: CampaignOptions): string {
  const violated = Object.entries(summary.violations).filter(([, n]) => n > 0);
  return [
    '── chaos summary ──',
    `trials ${summary.trials} (reference runs included), crashes ${summary.crashes}, ConcurrencyError/StoreError retries ${summary.retries}, FerretDB restarts ${summary.ferretBounces}`,
    ...(summary.temporalRestarts === undefined
      ? []
      : [`Temporal server restarts ${summary.temporalRestarts} (worker processes killed are counted as crashes)`]),
    `kill points per run: ${Object.entries(summary.killPoints)
      .map(([key, n]) => `${key} ${n}`)
      .join(', ')}`,
    `modes: ${options.modes.join(', ')}; stores: ${options.stores.join(', ')}; seed ${options.seed}${options.exhaustive ? '; exhaustive' : ''}${options.window === undefined ? '' : `; historyWindow ${options.window}`}`,
    `violations: ${violated.length === 0 ? 'none' : violated.map(([name, n]) => `${name} ${n}`).join(', ')} (${summary.failures.length} failing trials)`,
    ...summary.selfTest.map(
      (s) => `self-test ${s.store}: ${s.caught ? `caught (${s.invariants.join(', ')})` : 'NOT CAUGHT'}`,
    ),
    `wall time ${(summary.wallMs / 1000).toFixed(1)} s`,
  ].join('\n');
}
