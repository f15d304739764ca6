/**
 * Which trials a campaign runs: exhaustive plans (one crash at every kill point of the
 * uninterrupted run, then recovery) and random plans derived from a seed alone (store, mode,
 * retention, 1–3 crashes, delays, a FerretDB restart), so `--seed N` replays a trial exactly.
 */
import type { CheckpointFrequency, CheckpointKeep } from '@baton/handoff';
import type { CampaignOptions } from './campaign.js';
import { mulberry32 } from './killSwitch.js';
import type { TrialPlan } from './runTrial.js';

/** A store kind a campaign runs on. */
export type StoreKind = 'file' | 'mongo';

/** The retention each mode's exhaustive trials use. */
export function defaultKeep(every: CheckpointFrequency): CheckpointKeep {
  return every === 'turn' ? { last: 2 } : every === 'step' ? 'latest' : 'all';
}

/** `file/step`: the key of a (store, mode) pair. */
export function pairKey(store: StoreKind, every: CheckpointFrequency): string {
  return `${store}/${every}`;
}

function describeKeep(keep: CheckpointKeep): string {
  return typeof keep === 'string' ? keep : JSON.stringify(keep);
}

/**
 * One crash at each kill point 1..points of a (store, mode) pair, recovered by a fresh child.
 * @example
 * ```ts
 * const plans = exhaustivePlans('file', 'step', 180);
 * ```
 */
export function exhaustivePlans(store: StoreKind, every: CheckpointFrequency, points: number): TrialPlan[] {
  return Array.from({ length: points }, (_, index) => fixedPlan(store, every, [index + 1], 'exhaustive'));
}

/** A trial with given kill points (exhaustive trials and `--kill-at` replays). */
export function fixedPlan(store: StoreKind, every: CheckpointFrequency, kills: number[], kind = 'replay'): TrialPlan {
  return {
    label: `${kind} ${pairKey(store, every)} kills [${kills.join(', ')}]`,
    replay: `--store ${store} --mode ${every} --kill-at ${kills.join(',')}`,
    store,
    every,
    keep: defaultKeep(every),
    kills,
  };
}

/**
 * The random trial of `seed`: store and mode among those given, a retention, a first kill point
 * among the pair's `points`, in 40% of trials one or two more crashes during recovery, seeded delays,
 * in 25% of trials a SIGKILL at a random time of one child (which can land inside a store call),
 * and in 30% of MongoStore trials a FerretDB SIGKILL + restart during one of the children.
 *
 * @param points the kill points of each pair's uninterrupted run (`pairKey` → count)
 * @param durations how long each pair's uninterrupted child ran, in ms (for the timed kills)
 * @example
 * ```ts
 * const plan = randomPlan(17, ['file', 'mongo'], ['turn', 'step', 'manual'], points);
 * ```
 */
export function randomPlan(
  seed: number,
  stores: readonly StoreKind[],
  modes: readonly CheckpointFrequency[],
  points: ReadonlyMap<string, number>,
  durations: ReadonlyMap<string, number> = new Map(),
): TrialPlan {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const store = pick(stores);
  const every = pick(modes);
  const keep = pick<CheckpointKeep>(['latest', { last: 2 }, 'all', { maxAgeMs: 500 }]);
  const total = points.get(pairKey(store, every)) ?? 100;
  const kills = [1 + Math.floor(random() * total)];
  if (random() < 0.4) {
    const more = random() < 0.5 ? 1 : 2;
    for (let i = 0; i < more; i += 1) kills.push(1 + Math.floor(random() * Math.ceil(total * 0.6)));
  }
  const plan: TrialPlan = {
    label: `random seed ${seed} ${pairKey(store, every)} keep ${describeKeep(keep)} kills [${kills.join(', ')}]`,
    replay: `--seed ${seed} --store ${stores.length > 1 ? 'all' : store} --mode ${modes.length > 1 ? 'all' : every}`,
    store,
    every,
    keep,
    kills,
    delaySeed: Math.floor(random() * 2 ** 31),
  };
  if (store === 'mongo' && random() < 0.3)
    plan.bounce = { child: Math.floor(random() * (kills.length + 1)), afterMs: 50 + Math.floor(random() * 1500) };
  if (random() < 0.25) {
    const ms = durations.get(pairKey(store, every)) ?? 1500;
    plan.timedKill = {
      child: Math.floor(random() * (kills.length + 1)),
      afterMs: Math.floor(ms * (0.3 + 0.8 * random())),
    };
    plan.label += `, timed kill of child ${plan.timedKill.child} at ${plan.timedKill.afterMs} ms`;
  }
  return plan;
}

/**
 * The seeds of a campaign's random trials: `--replay-seed` alone, or `trials` seeds from `seed` on.
 * @example
 * ```ts
 * for (const seed of campaignSeeds(options)) plans.push(replicaPlan(seed, 2, stores, modes, points));
 * ```
 */
export function campaignSeeds(options: Pick<CampaignOptions, 'replaySeed' | 'trials' | 'seed'>): number[] {
  return options.replaySeed !== undefined
    ? [options.replaySeed]
    : Array.from({ length: options.trials }, (_, i) => options.seed + i);
}

/**
 * 1–3 kill points for a pool of processes, each in `1..share` (one process's share of the run's points;
 * each process started takes the next one), drawn from `random`.
 * @example
 * ```ts
 * const kills = poolKills(mulberry32(seed), Math.ceil((points * 1.2) / replicas));
 * ```
 */
export function poolKills(random: () => number, share: number): number[] {
  const kills = [1 + Math.floor(random() * share)];
  const more = random() < 0.5 ? 0 : random() < 0.5 ? 1 : 2;
  for (let i = 0; i < more; i += 1) kills.push(1 + Math.floor(random() * share));
  return kills;
}
