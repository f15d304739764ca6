/**
 * What the runners of the campaign share (process runner in campaign.ts, replicas, Temporal): a plan
 * narrowed to a window of history, and a trial's result added to the summary with its FAIL lines.
 */
import type { CampaignSummary } from './campaign.js';
import type { TrialResult } from './runTrial.js';

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
