import { resolve } from 'node:path';
import { isBatonError } from '@baton/core';
import { DEFAULT_STORE_DIR } from '@baton/example-support-desk/desk/deskStore.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ABCD_SPLITS } from './abcdImport.js';
import { checkCrossValidation, FOLDS, MAX_FOLDS, MAX_SEED_LENGTH, MIN_FOLDS } from './folds.js';
import { importCommand } from './importCommand.js';
import { replayCommand } from './replayCommand.js';
import { DEFAULT_REPLAY_CONCURRENCY, DEFAULT_REPLAY_WORKERS } from './runReplay.js';

const count =
  (name: string, least = 0) =>
  (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < least)
      throw new InvalidArgumentError(`${name} must be a whole number ≥ ${least}, not ${JSON.stringify(value)}.`);
    return n;
  };

/** `--folds`: a whole number MIN_FOLDS–MAX_FOLDS, checked by `checkCrossValidation` (whether the data holds that many conversations is checked once it is loaded). */
const foldsCount = (value: string) => {
  const n = Number(value);
  try {
    checkCrossValidation(n);
  } catch {
    throw new InvalidArgumentError(
      `--folds must be a whole number from ${MIN_FOLDS} to ${MAX_FOLDS}, not ${JSON.stringify(value)}.`,
    );
  }
  return n;
};

/** `--cv-seed`: 1 to MAX_SEED_LENGTH printable ASCII characters. */
const cvSeed = (value: string) => {
  try {
    checkCrossValidation(FOLDS, value);
  } catch {
    throw new InvalidArgumentError(
      `--cv-seed must be 1 to ${MAX_SEED_LENGTH} printable ASCII characters, not ${JSON.stringify(value)}.`,
    );
  }
  return value;
};

/**
 * A path given on the command line, made absolute against the folder the user ran the command in:
 * `pnpm start` runs this script in the package's folder and passes the caller's folder as `INIT_CWD`.
 */
const callerPath = (value: string) => resolve(process.env.INIT_CWD ?? process.cwd(), value);

const modelsOption = () =>
  new Option(
    '--models <kind>',
    'offline (learned from the data) or openai (OPENAI_API_KEY, OPENAI_MODEL, OPENAI_BASE_URL)',
  )
    .choices(['offline', 'openai'])
    .default(
      process.env.OPENAI_API_KEY ? 'openai' : 'offline',
      process.env.OPENAI_API_KEY ? 'openai, as OPENAI_API_KEY is set' : 'offline, as OPENAI_API_KEY is unset',
    );

const program = new Command()
  .name('desk-eval')
  .description(
    "The support desk's evaluation: replays customer-support conversations in ABCD's format through the desk (examples/support-desk).",
  )
  .addHelpText(
    'after',
    `
Data: --data FILE; else BATON_ABCD (a file, or a folder holding abcd-dev-400.jsonl or one *.jsonl); else the demo
conversations shipped with the example (examples/support-desk/conversations/demo.jsonl). Convert ABCD's public release with \`pnpm abcd:import\`.`,
  );

program
  .command('replay')
  .description(
    'Replay conversations through the desk and print a routing report (5-fold cross-validation, --folds/--cv-seed, or --train/--eval).',
  )
  .option('--data <file>', 'conversations, JSON Lines (default: BATON_ABCD, else the demo conversations)', callerPath)
  .option('--train <file>', 'the offline models learn from this file (with --eval; no cross-validation)', callerPath)
  .option('--eval <file>', 'replay this file with models learned from --train', callerPath)
  .option(
    '--folds <k>',
    `cross-validation folds, ${MIN_FOLDS}-${MAX_FOLDS} (default ${FOLDS}; not with --train/--eval)`,
    foldsCount,
  )
  .option(
    '--cv-seed <seed>',
    `draw another random partition into folds: sha256("baton-fold:" + seed + ":" + id) (1-${MAX_SEED_LENGTH} printable characters; default none, the fixed partition; not with --train/--eval)`,
    cvSeed,
  )
  .option('--limit <n>', 'replay a sample of n conversations, stratified by flow (deterministic)', count('--limit'))
  .option(
    '--restart-every <n>',
    'rebuild the workflow from the store every n customer messages (0: never)',
    count('--restart-every'),
    0,
  )
  .option(
    '--concurrency <n>',
    'replay n conversations at a time (each its own session; the report is the same for any n)',
    count('--concurrency', 1),
    DEFAULT_REPLAY_CONCURRENCY,
  )
  .option(
    '--workers <n>',
    'worker threads replaying the conversations, each n of them on --concurrency lanes (1: all in this thread; a :memory: store or --models openai always 1)',
    count('--workers', 1),
    DEFAULT_REPLAY_WORKERS,
  )
  .option(
    '--store-dir <dir>',
    `folder of the FileStore, cleared first (':memory:' for memory; MONGODB_URL wins)`,
    (dir: string) => (dir === ':memory:' ? dir : callerPath(dir)),
    DEFAULT_STORE_DIR,
  )
  .option('--json', 'print the report as JSON', false)
  .option('--reject-refunds', 'reject every refund approval instead of approving it', false)
  .option('--no-progress', 'no progress bar')
  .addOption(modelsOption())
  .action(async (options) => {
    const report = await replayCommand({
      ...(options.data === undefined ? {} : { data: options.data }),
      ...(options.train === undefined ? {} : { train: options.train }),
      ...(options.eval === undefined ? {} : { eval: options.eval }),
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(options.folds === undefined ? {} : { folds: options.folds }),
      ...(options.cvSeed === undefined ? {} : { cvSeed: options.cvSeed }),
      restartEvery: options.restartEvery,
      concurrency: options.concurrency,
      workers: options.workers,
      storeDir: options.storeDir,
      json: options.json,
      rejectRefunds: options.rejectRefunds,
      models: options.models,
      progress: options.progress && !options.json,
    });
    if (report.counts.failed > 0) process.exitCode = 1;
  });

program
  .command('import')
  .description(
    "Convert one split of ABCD's public release (abcd_v1.1.json.gz, github.com/asappresearch/abcd) into the desk's JSON Lines format.",
  )
  .argument('<file>', 'abcd_v1.1.json.gz', callerPath)
  .addOption(new Option('--split <split>', 'which split').choices([...ABCD_SPLITS]).makeOptionMandatory())
  .option(
    '--per-flow <n>',
    'keep n conversations per flow (a deterministic sample by sha256 of the id)',
    count('--per-flow'),
  )
  .option(
    '--out <file>',
    'where to write (default abcd-<split>.jsonl, or abcd-<split>-<count>.jsonl with --per-flow, in the current folder)',
    callerPath,
  )
  .action(async (file: string, options) => {
    await importCommand({
      file,
      split: options.split,
      directory: process.env.INIT_CWD ?? process.cwd(),
      ...(options.perFlow === undefined ? {} : { perFlow: options.perFlow }),
      ...(options.out === undefined ? {} : { out: options.out }),
    });
  });

// `pnpm start -- --help` passes the `--` on: drop it when it comes right after the command's name.
const argv = process.argv.slice();
if (argv[3] === '--') argv.splice(3, 1);
else if (argv[2] === '--') argv.splice(2, 1);

try {
  await program.parseAsync(argv);
} catch (error) {
  if (isBatonError(error)) {
    console.error(`${error.name}: ${error.message}`);
    process.exitCode = 1;
  } else throw error;
}
