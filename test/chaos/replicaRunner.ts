/**
 * `pnpm chaos --replicas 2`: the crash campaign on two `@baton/server` processes on one store
 * (FileStore in a temp dir, MongoStore on the campaign's FerretDB) behind a round-robin proxy; the
 * customer speaks HTTP and follows `GET /events` with `Last-Event-ID` after every drop. Per (store,
 * mode) (`turn`, `step`; `manual` needs the customer's own `checkpoint()`, which an HTTP client does
 * not make) an uninterrupted run counts the replicas' kill points and gives the reference transcript;
 * then random trials, one at a time (each runs two server processes): 1–3 replica processes SIGKILLed
 * at kill points and started again on their port. The campaign's oracle judges the store and side log;
 * the stream oracle what the customer received (no SSE id naming two events, every stored message seen).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointFrequency, CheckpointKeep } from '@baton/handoff';
import type { CampaignOptions, CampaignSummary } from './campaign.js';
import { type FerretServer, startFerretServer } from './ferretServer.js';
import { mulberry32 } from './killSwitch.js';
import { type ReplicaTrialEnvironment, type ReplicaTrialPlan, runReplicaTrial } from './replicaTrial.js';
import type { TrialResult } from './runTrial.js';
import { campaignSeeds, defaultKeep, pairKey, poolKills, type StoreKind } from './trialPlans.js';
import { emptySummary, recordTrial, settleReferences, windowed } from './trialRecord.js';

/** The checkpoint modes a replica campaign runs. */
export const REPLICA_MODES: readonly CheckpointFrequency[] = ['turn', 'step'];

/**
 * Runs the replica campaign with `options.replicas` server processes (`manual` is left out of `options.modes`).
 * With `killAt`, each trial keeps its seed's store, mode, retention and delays but kills at those
 * points (the points vary with timing between reference runs, so this pins a replay).
 * @throws {Error} when none of `options.modes` is `turn` or `step`, or with `exhaustive` or `selfTest`
 * @example
 * ```ts
 * const summary = await runReplicaCampaign({ replicas: 2, stores: ['file', 'mongo'], modes: ['turn', 'step'], exhaustive: false, trials: 6, seed: 1, selfTest: false });
 * ```
 */
export async function runReplicaCampaign(options: CampaignOptions): Promise<CampaignSummary> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const replicas = options.replicas ?? 2;
  const modes = options.modes.filter((m) => REPLICA_MODES.includes(m));
  if (modes.length === 0)
    throw new Error(`--replicas runs the modes ${REPLICA_MODES.join(', ')}, not ${options.modes.join(', ')}.`);
  if (options.exhaustive || options.selfTest)
    throw new Error(
      '--replicas runs random trials (--trials N, --seed N): --exhaustive and --self-test are for the process runner.',
    );
  const started = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'baton-chaos-replicas-'));
  const summary = emptySummary();
  let ferret: FerretServer | undefined;
  try {
    if (options.stores.includes('mongo')) ferret = await startFerretServer();
    const env: ReplicaTrialEnvironment = { workDir, ferret, signal: options.signal };
    const references = new Map<string, TrialResult>();
    for (const store of options.stores)
      for (const every of modes) {
        const plan: ReplicaTrialPlan = {
          label: `replicas reference ${pairKey(store, every)}`,
          replay: `--replicas ${replicas} --store ${store} --mode ${every}`,
          store,
          every,
          keep: defaultKeep(every),
          kills: [],
          replicas,
          labels: true,
        };
        references.set(pairKey(store, every), await runReplicaTrial(windowed(plan, options.window), env));
      }
    const first = settleReferences(summary, references.values(), (result) => recordTrial(summary, result, print));
    print(
      `reference runs (${replicas} replicas): ${[...references].map(([key, r]) => `${key} ${r.points} points in ${r.lastChildMs} ms`).join(', ')}`,
    );

    const seeds = campaignSeeds(options);
    const points = new Map(Object.entries(summary.killPoints));
    print(
      `running ${seeds.length} replica trials, one at a time (seed ${options.seed}; modes ${modes.join(', ')}; stores ${options.stores.join(', ')})`,
    );
    for (const seed of seeds) {
      options.signal?.throwIfAborted();
      const plan = windowed(
        killingAt(replicaPlan(seed, replicas, options.stores, modes, points), options.killAt),
        options.window,
      );
      const trialStarted = Date.now();
      const result = await runReplicaTrial(plan, env, first.transcript);
      recordTrial(summary, result, print);
      print(
        `  ${plan.label}: ${result.crashes} replicas killed, ${result.retries} client retries (${
          Object.entries(result.retryCodes ?? {})
            .map(([code, n]) => `${code} ${n}`)
            .join(', ') || 'none'
        }), conversation ${(result.lastChildMs / 1000).toFixed(1)} s, trial ${((Date.now() - trialStarted) / 1000).toFixed(1)} s, ${result.violations.length === 0 ? 'ok' : 'FAILED'}`,
      );
    }
  } finally {
    summary.ferretBounces = ferret?.bounces ?? 0;
    await ferret?.close();
    if (summary.failures.length === 0) await rm(workDir, { recursive: true, force: true });
    summary.wallMs = Date.now() - started;
  }
  return summary;
}

/** `plan` killing at `killAt` instead of its own points (when given). */
function killingAt(plan: ReplicaTrialPlan, killAt: number[] | undefined): ReplicaTrialPlan {
  if (killAt === undefined) return plan;
  return {
    ...plan,
    kills: killAt,
    label: plan.label.replace(/kills \[[^\]]*\]/, `kills [${killAt.join(', ')}]`),
    replay: `${plan.replay} --kill-at ${killAt.join(',')}`,
  };
}

/**
 * The replica trial of `seed`: store, mode, retention, 1–3 kill points (each among the first 1.2 / replicas
 * of the uninterrupted run's points: one replica's share; each replica process started takes the next one),
 * seeded delays.
 * @param points the kill points of each pair's uninterrupted run, all replicas together (`pairKey` → count)
 * @example
 * ```ts
 * const plan = replicaPlan(17, 2, ['file', 'mongo'], ['turn', 'step'], new Map([['file/turn', 90]]));
 * ```
 */
export function replicaPlan(
  seed: number,
  replicas: number,
  stores: readonly StoreKind[],
  modes: readonly CheckpointFrequency[],
  points: ReadonlyMap<string, number>,
): ReplicaTrialPlan {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const store = pick(stores);
  const every = pick(modes);
  const keep = pick<CheckpointKeep>(['latest', { last: 2 }, 'all', { maxAgeMs: 500 }]);
  const share = Math.ceil(((points.get(pairKey(store, every)) ?? 100) * 1.2) / replicas);
  const kills = poolKills(random, share);
  return {
    label: `replicas seed ${seed} ${pairKey(store, every)} keep ${typeof keep === 'string' ? keep : JSON.stringify(keep)} kills [${kills.join(', ')}]`,
    replay: `--replicas ${replicas} --seed ${seed} --store ${stores.length > 1 ? 'all' : store} --mode ${modes.length > 1 ? 'all' : every}`,
    store,
    every,
    keep,
    kills,
    replicas,
    delaySeed: Math.floor(random() * 2 ** 31),
  };
}
