/**
 * A short Temporal crash campaign in CI (`pnpm chaos --runner temporal --trials 2`): uninterrupted
 * reference runs per mode (turn, step), then 2 seeded trials with 2–3 `@baton/temporal` worker
 * processes SIGKILLed at kill points (and, for seed 2, the Temporal dev server SIGKILLed and
 * restarted); the oracle must find no violation. `CHAOS_TEMPORAL_SEED` picks another first seed.
 */
import { describe, expect, it } from 'vitest';
import { type CampaignOptions, formatSummary, runCampaign } from './campaign.js';

const options: CampaignOptions = {
  runner: 'temporal',
  stores: ['mongo'],
  modes: ['turn', 'step'],
  exhaustive: false,
  trials: 2,
  seed: Number(process.env.CHAOS_TEMPORAL_SEED ?? 1),
  selfTest: false,
};

// Each trial starts 2–3 worker processes (tsx, the Temporal native bridge) plus one per kill; a killed turn
// waits for the 2 s heartbeat timeout. About 2-3 minutes on a quiet machine with 2 cores.
const CAMPAIGN_TIMEOUT_MS = 900_000;

describe('the crash campaign on Temporal', () => {
  it('finds no violation in 2 trials with worker processes SIGKILLed at kill points and a Temporal server restart', {
    timeout: CAMPAIGN_TIMEOUT_MS,
  }, async ({ signal }) => {
    const lines: string[] = [];
    const summary = await runCampaign({ ...options, signal, print: (line) => lines.push(line) });
    const report = `${lines.join('\n')}\n${formatSummary(summary, options)}`;
    expect(summary.trials, report).toBe(2 + 2);
    expect(summary.crashes, report).toBeGreaterThanOrEqual(1);
    expect(
      summary.failures.map((f) => f.plan.label),
      report,
    ).toEqual([]);
  });
});
