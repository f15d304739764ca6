/**
 * What the runners of the campaign share (process runner in campaign.ts, replicas, Temporal): a plan
 * narrowed to a window of history, an empty summary, the reference runs checked against each other,
 * and a trial's result added to the summary with its FAIL lines.
 */
import type { CampaignSummary } from './campaign.js';
import { INVARIANTS, type Invariant, transcriptDiff } from './oracle.js';
import type { TrialResult } from './runTrial.js';
import { pairKey } from './trialPlans.js';

/** A plan that records its history window in its label and its replay command. */
interface WindowablePlan {
  window?: number;
  label: string;
  replay: string;
}

/** The plan with `window` (messages of history each turn opens), or unchanged without one. */
export function windowed<P extends WindowablePlan>(plan: P, window: number | undefined): P {
  if (window === undefined) return plan;
  plan.window = window;
  plan.label += `, window ${window}`;
  plan.replay += ` --window ${window}`;
  return plan;
}

/** Counts `result` into `summary`; a failed trial is printed with its replay command and each violation. */
export function recordTrial(summary: CampaignSummary, result: TrialResult, print: (line: string) => void): void {
  summary.trials += 1;
  summary.crashes += result.crashes;
  summary.retries += result.retries;
  if (result.violations.length === 0) return;
  summary.failures.push(result);
  print(`FAIL ${result.plan.label}`);
  print(
    `  replay: npx --yes pnpm@10.34.8 chaos ${result.plan.replay}${result.keptAt ? `; data kept in ${result.keptAt}` : ''}`,
  );
  for (const violation of result.violations) {
    summary.violations[violation.invariant] += 1;
    print(`  [${violation.invariant}] ${violation.detail.replaceAll('\n', '\n    ')}`);
  }
}

/**
 * A summary with nothing counted yet.
 * @example
 * ```ts
 * const summary = emptySummary();
 * ```
 */
export function emptySummary(): CampaignSummary {
  return {
    trials: 0,
    crashes: 0,
    retries: 0,
    ferretBounces: 0,
    killPoints: {},
    violations: Object.fromEntries(INVARIANTS.map((i) => [i, 0])) as Record<Invariant, number>,
    failures: [],
    selfTest: [],
    wallMs: 0,
  };
}

/**
 * Counts each uninterrupted reference run's kill points into `summary` (by `pairKey`), gives it a
 * `transcript-differs` violation when its transcript is not the first run's, and records it.
 * @returns the first reference run, whose transcript every trial must end with
 * @example
 * ```ts
 * const first = settleReferences(summary, references, (result) => recordTrial(summary, result, print));
 * ```
 */
export function settleReferences(
  summary: CampaignSummary,
  references: Iterable<TrialResult>,
  record: (result: TrialResult) => void,
): TrialResult {
  const runs = [...references];
  const first = runs[0];
  if (first === undefined) throw new Error('A campaign needs at least one reference run.');
  for (const result of runs) {
    const key = pairKey(result.plan.store, result.plan.every);
    summary.killPoints[key] = result.points;
    const diff = transcriptDiff(result.transcript, first.transcript);
    if (diff !== undefined)
      result.violations.push({
        invariant: 'transcript-differs',
        detail: `reference ${key} differs from ${pairKey(first.plan.store, first.plan.every)}: ${diff}`,
      });
    record(result);
  }
  return first;
}
