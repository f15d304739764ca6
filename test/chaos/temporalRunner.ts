/**
 * `pnpm chaos --runner temporal`: the crash campaign on `@baton/temporal`. One FerretDB and one
 * `temporal server start-dev` per campaign; per checkpoint mode (`turn`, `step`; `manual` needs the
 * customer's own `checkpoint()` call, which a Temporal client does not make) an uninterrupted run
 * with one worker counts the workers' kill points and gives the reference transcript; then random
 * trials, one at a time (each runs 2–3 worker processes): 1–3 worker processes SIGKILLed at kill
 * points, in 30% of trials the Temporal server SIGKILLed and restarted on the same port and
 * database. The same oracle as the process campaign judges each trial.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointFrequency, CheckpointKeep } from '@baton/handoff';
import { bundleBatonWorkflows } from '@baton/temporal';
import type { CampaignOptions, CampaignSummary } from './campaign.js';
import { type FerretServer, startFerretServer } from './ferretServer.js';
import { mulberry32 } from './killSwitch.js';
import type { TrialResult } from './runTrial.js';
import { startTemporalDevServer, type TemporalDevServer } from './temporalDevServer.js';
import { runTemporalTrial, type TemporalTrialEnvironment, type TemporalTrialPlan } from './temporalTrial.js';
import { campaignSeeds, defaultKeep, poolKills } from './trialPlans.js';
import { emptySummary, recordTrial, settleReferences, windowed } from './trialRecord.js';

/** The checkpoint modes a Temporal campaign runs. */
export const TEMPORAL_MODES: readonly CheckpointFrequency[] = ['turn', 'step'];

/**
 * Runs the Temporal campaign (MongoStore only; `options.stores` is not used, `manual` is left out of `options.modes`).
 * @throws {Error} when none of `options.modes` is `turn` or `step`, or with `exhaustive`, `killAt` or `selfTest`
 * @example
 * ```ts
 * const summary = await runTemporalCampaign({ runner: 'temporal', stores: ['mongo'], modes: ['turn', 'step'], exhaustive: false, trials: 6, seed: 1, selfTest: false });
 * ```
 */
export async function runTemporalCampaign(options: CampaignOptions): Promise<CampaignSummary> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const modes = options.modes.filter((m) => TEMPORAL_MODES.includes(m));
  if (modes.length === 0)
    throw new Error(`--runner temporal runs the modes ${TEMPORAL_MODES.join(', ')}, not ${options.modes.join(', ')}.`);
  if (options.exhaustive || options.killAt !== undefined || options.selfTest) {
    throw new Error(
      '--runner temporal runs random trials (--trials N, --seed N): --exhaustive, --kill-at and --self-test are for the process runner.',
    );
  }
  const started = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'baton-chaos-temporal-'));
  const summary: CampaignSummary = { ...emptySummary(), temporalRestarts: 0 };
  let ferret: FerretServer | undefined;
  let temporal: TemporalDevServer | undefined;
  try {
    ferret = await startFerretServer();
    temporal = await startTemporalDevServer();
    const bundlePath = join(workDir, 'workflows.js');
    await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
    const env: TemporalTrialEnvironment = { workDir, ferret, temporal, bundlePath, signal: options.signal };

    const references = new Map<CheckpointFrequency, TrialResult>();
    for (const every of modes) {
      const plan: TemporalTrialPlan = {
        label: `temporal reference mongo/${every}`,
        replay: `--runner temporal --mode ${every}`,
        store: 'mongo',
        every,
        keep: defaultKeep(every),
        kills: [],
        workers: 1,
        labels: true,
      };
      const result = await runTemporalTrial(windowed(plan, options.window), env);
      references.set(every, result);
    }
    const first = settleReferences(summary, references.values(), (result) => recordTrial(summary, result, print));
    print(
      `reference runs (1 worker): ${[...references].map(([every, r]) => `mongo/${every} ${r.points} points in ${r.lastChildMs} ms`).join(', ')}`,
    );

    const seeds = campaignSeeds(options);
    const points = new Map([...references].map(([every, r]) => [every, r.points]));
    print(
      `running ${seeds.length} Temporal trials, one at a time (seed ${options.seed}; modes ${modes.join(', ')}; store mongo)`,
    );
    for (const seed of seeds) {
      options.signal?.throwIfAborted();
      const plan = windowed(temporalPlan(seed, modes, points), options.window);
      const result = await runTemporalTrial(plan, env, first.transcript);
      recordTrial(summary, result, print);
      print(
        `  ${plan.label}: ${result.crashes} workers killed, ${result.retries} client retries, ${(result.lastChildMs / 1000).toFixed(1)} s, ${result.violations.length === 0 ? 'ok' : 'FAILED'}`,
      );
    }
  } finally {
    summary.ferretBounces = ferret?.bounces ?? 0;
    summary.temporalRestarts = temporal?.bounces ?? 0;
    await temporal?.close();
    await ferret?.close();
    if (summary.failures.length === 0) await rm(workDir, { recursive: true, force: true });
    summary.wallMs = Date.now() - started;
  }
  return summary;
}

/**
 * The Temporal trial of `seed`: mode, retention, 2 or 3 workers, 1–3 worker kill points (each among the
 * first 1.2 / workers of the uninterrupted run's points: one worker's share), seeded delays, and in 30% of trials a Temporal server SIGKILL + restart 0.5–6 s in.
 * @example
 * ```ts
 * const plan = temporalPlan(17, ['turn', 'step'], new Map([['turn', 90], ['step', 120]]));
 * ```
 */
export function temporalPlan(
  seed: number,
  modes: readonly CheckpointFrequency[],
  points: ReadonlyMap<CheckpointFrequency, number>,
): TemporalTrialPlan {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const every = pick(modes);
  const keep = pick<CheckpointKeep>(['latest', { last: 2 }, 'all', { maxAgeMs: 500 }]);
  const workers = random() < 0.5 ? 2 : 3;
  const total = points.get(every) ?? 100;
  // A pool splits the run's points among its workers: a kill point beyond a worker's share is seldom reached.
  const share = Math.ceil((total * 1.2) / workers);
  const kills = poolKills(random, share);
  const plan: TemporalTrialPlan = {
    label: `temporal seed ${seed} mongo/${every} keep ${typeof keep === 'string' ? keep : JSON.stringify(keep)} ${workers} workers kills [${kills.join(', ')}]`,
    replay: `--runner temporal --seed ${seed} --mode ${modes.length > 1 ? 'all' : every}`,
    store: 'mongo',
    every,
    keep,
    kills,
    workers,
    delaySeed: Math.floor(random() * 2 ** 31),
  };
  if (random() < 0.3) {
    plan.temporalBounce = { afterMs: 500 + Math.floor(random() * 5_500) };
    plan.label += `, Temporal server restarted at ${plan.temporalBounce.afterMs} ms`;
  }
  return plan;
}
