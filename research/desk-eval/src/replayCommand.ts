import { ConfigurationError } from '@baton/core';
import { displayPath, resolveDataSource } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import type { DeskModels } from '@baton/example-support-desk/desk/deskAgents.js';
import { createOpenAIModels } from '@baton/example-support-desk/desk/deskModels.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { specialistForFlow } from '@baton/example-support-desk/desk/specialists.js';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import cliProgress from 'cli-progress';
import { formatReplayReport, type ReplayReport } from './replayReport.js';
import { DEFAULT_REPLAY_WORKERS, runReplay } from './runReplay.js';
import { stratifiedSample } from './stratifiedSample.js';

/** Options of the `replay` command (see `cli.ts`). */
export interface ReplayCommandOptions {
  /** `--data FILE` (absolute); when neither this nor `train`/`eval` is given, the data is looked up (see `resolveDataSource`). */
  data?: string;
  /** `--train FILE`: the offline models learn from this file and `eval` is replayed (held out, no cross-validation). */
  train?: string;
  /** `--eval FILE`: the conversations replayed with models learned from `train`. */
  eval?: string;
  /** `--folds K`: cross-validation folds (2–50; default 5). Refused with `train`/`eval`. */
  folds?: number;
  /** `--cv-seed S`: draws another random partition into folds (see `RunReplayOptions.crossValidation`). Refused with `train`/`eval`. */
  cvSeed?: string;
  /** Replay a sample of this many conversations, stratified by flow (deterministic). */
  limit?: number;
  restartEvery: number;
  /** Conversations replayed at a time (default 4; see `RunReplayOptions.concurrency`). */
  concurrency?: number;
  /** Worker threads (default {@link DEFAULT_REPLAY_WORKERS}; see `RunReplayOptions.workers`). */
  workers?: number;
  storeDir?: string;
  json: boolean;
  rejectRefunds: boolean;
  models: 'offline' | 'openai';
  progress: boolean;
}

/** The conversations of a run and the `Data:` line that names them. */
interface RunData {
  replayed: AbcdConversation[];
  training: AbcdConversation[];
  evaluation: 'cross-validation' | 'held-out';
  line: string;
}

async function runData(options: ReplayCommandOptions): Promise<RunData> {
  const sampled = (all: AbcdConversation[]) => {
    const replayed = options.limit === undefined ? all : stratifiedSample(all, options.limit, (c) => c.flow);
    return {
      replayed,
      note: replayed.length < all.length ? `, a sample of ${replayed.length} stratified by flow` : '',
    };
  };
  if (options.train !== undefined || options.eval !== undefined) {
    if (options.train === undefined || options.eval === undefined || options.data !== undefined) {
      throw new ConfigurationError(
        'Use --train FILE together with --eval FILE (and without --data): the models learn from the one and replay the other.',
      );
    }
    if (options.folds !== undefined || options.cvSeed !== undefined) {
      throw new ConfigurationError(
        '--folds and --cv-seed choose cross-validation folds: --train/--eval evaluate on a held-out file, without cross-validation. Use them with --data (or no data option) instead.',
      );
    }
    const [training, all] = await Promise.all([loadConversations(options.train), loadConversations(options.eval)]);
    const [trainSource, evalSource] = await Promise.all([
      resolveDataSource({ data: options.train }),
      resolveDataSource({ data: options.eval }),
    ]);
    const { replayed, note } = sampled(all);
    const line = `Data: trained on ${trainSource.label} (${training.length}, ${displayPath(options.train)}), replaying ${evalSource.label} (${all.length}, ${displayPath(options.eval)})${note}`;
    return { replayed, training, evaluation: 'held-out', line };
  }
  const source = await resolveDataSource({ data: options.data });
  const all = await loadConversations(source.file);
  const { replayed, note } = sampled(all);
  return {
    replayed,
    training: all,
    evaluation: 'cross-validation',
    line: `Data: ${source.label} (${all.length}, ${displayPath(source.file)})${note}`,
  };
}

/**
 * The `replay` command: finds and loads the conversations, prints a first line naming them
 * (`Data: demo conversations (82, examples/support-desk/conversations/demo.jsonl)`; on stderr with
 * `json`), replays them with a progress bar on stderr, and prints the report (text, or JSON with
 * `json`). When a conversation failed, the first failure is printed on stderr above the report.
 *
 * @param options what `cli.ts` parsed: `{ data?, train?, eval?, folds?, cvSeed?, limit?, restartEvery, concurrency?, workers?, storeDir?, json, rejectRefunds, models, progress }`
 * @returns the report (`report.counts.failed` > 0 when a conversation failed; the CLI then exits with 1)
 * @throws {NotFoundError} when a data file is missing (the message says what format is expected), or `BATON_ABCD` names nothing usable
 * @throws {InvalidInputError} when a line of a data file is not an ABCD conversation, `concurrency` or `workers` is not a whole number ≥ 1,
 *   or `folds` is out of range (2–50, at most the conversations) or `cvSeed` is not 1–64 printable ASCII characters
 * @throws {ConfigurationError} when `storeDir` holds files a FileStore does not write (it is not cleared), for
 *   `models: 'openai'` without an API key, for `train` without `eval` (or with `data`), or `folds`/`cvSeed` with `train`/`eval` or `models: 'openai'`
 * @example
 * ```ts
 * await replayCommand({ limit: 20, restartEvery: 0, json: false, rejectRefunds: false, models: 'offline', progress: false });
 * ```
 */
export async function replayCommand(options: ReplayCommandOptions): Promise<ReplayReport> {
  if (options.models === 'openai' && (options.folds !== undefined || options.cvSeed !== undefined)) {
    throw new ConfigurationError(
      '--folds and --cv-seed choose the folds the offline models learn from: --models openai learns nothing, so there are no folds.',
    );
  }
  const data = await runData(options);
  if (options.json) console.error(data.line);
  else console.log(data.line);
  const conversations = data.replayed;
  const deskStore = chooseDeskStore({
    ...(options.storeDir === undefined ? {} : { directory: options.storeDir }),
    mongoUrl: process.env.MONGODB_URL,
  });
  const models: DeskModels | undefined = options.models === 'openai' ? await createOpenAIModels() : undefined;
  const bar = options.progress
    ? new cliProgress.SingleBar(
        {
          format: 'Replaying {bar} {value}/{total} conversations | routed right {right}% | {duration}s',
          stream: process.stderr,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let right = 0;
  bar?.start(conversations.length, 0, { right: '0.0' });
  try {
    const report = await runReplay({
      conversations,
      training: data.training,
      evaluation: data.evaluation,
      ...(options.folds !== undefined || options.cvSeed !== undefined
        ? {
            crossValidation: {
              ...(options.folds === undefined ? {} : { folds: options.folds }),
              ...(options.cvSeed === undefined ? {} : { seed: options.cvSeed }),
            },
          }
        : {}),
      ontology: loadOntology(),
      deskStore,
      restartEvery: options.restartEvery,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      workers: options.workers ?? DEFAULT_REPLAY_WORKERS,
      rejectRefunds: options.rejectRefunds,
      ...(models === undefined ? {} : { models }),
      onConversation: (outcome, done) => {
        if (outcome.routedTo !== null && outcome.routedTo === specialistForFlow(outcome.flow)) right += 1;
        bar?.update(done, { right: ((100 * right) / done).toFixed(1) });
      },
    });
    bar?.stop();
    const failed = report.conversations.find((outcome) => outcome.failure !== null);
    if (failed !== undefined) {
      console.error(
        `${report.counts.failed} of ${report.counts.conversations} conversations failed; the first, ${failed.id}: ${failed.failure}`,
      );
    }
    const { conversations: _each, ...summary } = report;
    console.log(
      options.json
        ? JSON.stringify({ data: data.line.slice('Data: '.length), ...summary }, null, 2)
        : formatReplayReport(report),
    );
    return report;
  } finally {
    bar?.stop();
  }
}
