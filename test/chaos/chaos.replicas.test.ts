/**
 * A short replica crash campaign in CI (`pnpm chaos --replicas 2 --trials 2`): uninterrupted
 * reference runs per (store, mode) with two `@baton/server` processes on one store behind a
 * round-robin proxy, then 2 seeded trials in which replica processes are SIGKILLed at kill points
 * and started again (seeds 7 and 8: FileStore in modes turn and step); the campaign's oracle and the
 * stream oracle must find no violation.
 * `CHAOS_REPLICAS_SEED` picks another first seed.
 */
import { describe, expect, it } from 'vitest';
import { type CampaignOptions, formatSummary, runCampaign } from './campaign.js';

const options: CampaignOptions = {
  replicas: 2,
  stores: ['file', 'mongo'],
  modes: ['turn', 'step'],
  exhaustive: false,
  trials: 2,
  seed: Number(process.env.CHAOS_REPLICAS_SEED ?? 7),
  selfTest: false,
};

// Each trial starts two server processes (tsx) plus one per kill; a cut turn waits for its 1 s lease to
// expire. About 5 minutes on a busy machine with 2 cores (4 reference runs, 2 trials).
const CAMPAIGN_TIMEOUT_MS = 1_200_000;

describe('the crash campaign on two server replicas', () => {
  it('finds no violation in 2 trials with replica processes SIGKILLed at kill points', {
    timeout: CAMPAIGN_TIMEOUT_MS,
  }, async ({ signal }) => {
    const lines: string[] = [];
    const summary = await runCampaign({ ...options, signal, print: (line) => lines.push(line) });
    const report = `${lines.join('\n')}\n${formatSummary(summary, options)}`;
    expect(summary.trials, report).toBe(4 + 2);
    expect(summary.crashes, report).toBeGreaterThanOrEqual(1);
    expect(
      summary.failures.map((f) => f.plan.label),
      report,
    ).toEqual([]);
  });
});
