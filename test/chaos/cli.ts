/**
 * `pnpm chaos [--exhaustive] [--trials N] [--seed N] [--store file|mongo|all] [--mode turn|step|manual|all]
 * [--kill-at K[,K2…]] [--self-test] [--window N] [--runner temporal] [--replicas 2]`: runs the crash campaign and
 * exits non-zero on any violation (or when the self-test's damage goes unnoticed).
 */
import { parseArgs } from 'node:util';
import type { CheckpointFrequency } from '@baton/handoff';
import { type CampaignOptions, formatSummary, runCampaign } from './campaign.js';
import type { StoreKind } from './trialPlans.js';

const { values } = parseArgs({
  options: {
    exhaustive: { type: 'boolean', default: false },
    trials: { type: 'string' },
    seed: { type: 'string' },
    store: { type: 'string', default: 'all' },
    mode: { type: 'string', default: 'all' },
    'kill-at': { type: 'string' },
    'self-test': { type: 'boolean', default: false },
    window: { type: 'string' },
    runner: { type: 'string', default: 'process' },
    replicas: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(
    'pnpm chaos [--exhaustive] [--trials N] [--seed N] [--store file|mongo|all] [--mode turn|step|manual|all] [--kill-at K[,K2]] [--self-test] [--window N]\n' +
      '  --runner temporal runs it on @baton/temporal worker processes and a Temporal dev server (MongoStore; modes turn, step).\n' +
      '  --replicas 2 runs it over HTTP on two @baton/server processes on one store behind a round-robin proxy (modes turn, step).\n' +
      '  --window N runs every agent with historyWindow({ messages: N }) (references included).\n' +
      '  --seed N alone replays the random trial of seed N; with --trials it is the first seed of the campaign.\n',
  );
  process.exit(0);
}

function choice<T extends string>(value: string, all: readonly T[], flag: string): T[] {
  if (value === 'all') return [...all];
  if ((all as readonly string[]).includes(value)) return [value as T];
  process.stderr.write(`--${flag} must be one of ${all.join(', ')} or all, not ${JSON.stringify(value)}\n`);
  process.exit(2);
}

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${flag} must be a non-negative integer, not ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return n;
}

// On Ctrl-C or a timeout's SIGTERM, exit through process.exit so the 'exit' hook stops the campaign's FerretDB.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const seed = integer(values.seed, 'seed');
const trials = integer(values.trials, 'trials');
const options: CampaignOptions = {
  stores: choice<StoreKind>(values.store, ['file', 'mongo'], 'store'),
  modes: choice<CheckpointFrequency>(values.mode, ['turn', 'step', 'manual'], 'mode'),
  exhaustive: values.exhaustive,
  trials: trials ?? (values.exhaustive ? 0 : 100),
  seed: seed ?? Math.floor(Math.random() * 1_000_000),
  replaySeed: seed !== undefined && trials === undefined && !values.exhaustive ? seed : undefined,
  killAt: values['kill-at']?.split(',').map((k) => integer(k, 'kill-at') ?? 0),
  selfTest: values['self-test'],
  window: integer(values.window, 'window'),
  runner: choice<'process' | 'temporal'>(values.runner, ['process', 'temporal'], 'runner')[0],
  replicas: values.replicas === undefined ? undefined : Number(choice(values.replicas, ['2', '3'], 'replicas')[0]),
};
// The Temporal runner runs on MongoStore in the modes turn and step (see temporalRunner.ts): the summary says so.
if (options.runner === 'temporal')
  Object.assign(options, { stores: ['mongo'], modes: options.modes.filter((m) => m !== 'manual') });
// The replica runner runs the modes turn and step too (an HTTP client makes no manual checkpoint).
if (options.replicas !== undefined) options.modes = options.modes.filter((m) => m !== 'manual');
const summary = await runCampaign(options);
process.stdout.write(`${formatSummary(summary, options)}\n`);
const violations = Object.values(summary.violations).reduce((a, b) => a + b, 0);
const missed = summary.selfTest.some((s) => !s.caught);
// Exit even if a driver socket of a failed trial is still open.
process.exit(violations > 0 || missed ? 1 : 0);
