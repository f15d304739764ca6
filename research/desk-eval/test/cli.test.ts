import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldOf } from '../src/folds.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
type Failed = { code: number; stdout: string; stderr: string };
// The package's own scripts run the CLI this way (see package.json "start"). BATON_ABCD is set per test.
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(tsx, ['--conditions=source', 'src/cli.ts', ...args], {
    cwd: root,
    env: { ...process.env, OPENAI_API_KEY: '', MONGODB_URL: '', BATON_ABCD: DEMO_DATA_FILE, ...env },
  });
const failing = (args: string[], env: Record<string, string> = {}) =>
  cli(args, env).then(
    () => expect.unreachable('the command should fail'),
    (e: unknown) => e as Failed,
  );

let dir: string;
let demoLines: string[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-cli-'));
  demoLines = (await readFile(DEMO_DATA_FILE, 'utf8')).split('\n').filter((line) => line !== '');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('desk-eval CLI', () => {
  it('names its data on the first line, replays a sample stratified by flow into a FileStore and prints the report as JSON', async () => {
    const { stdout, stderr } = await cli(['replay', '--limit', '10', '--json', '--store-dir', join(dir, 'store')]);
    expect(stderr.split('\n')[0]).toBe(
      'Data: demo conversations (82, examples/support-desk/conversations/demo.jsonl), a sample of 10 stratified by flow',
    );
    const report = JSON.parse(stdout);
    expect(report.data).toBe(
      'demo conversations (82, examples/support-desk/conversations/demo.jsonl), a sample of 10 stratified by flow',
    );
    expect(report.counts.conversations).toBe(10);
    // One conversation of each of the ten flows, not the first ten lines (which are all account_access and manage_account).
    expect(report.routing.perFlow.map((row: { specialist: { total: number } }) => row.specialist.total)).toEqual(
      Array(10).fill(1),
    );
    expect(report.evaluation).toContain('5-fold cross-validation');
    expect(report.store).toContain('file');
    expect(report.measurements.bytesPerMessage).toBeGreaterThan(0);
    expect((await readdir(join(dir, 'store'))).length).toBeGreaterThan(0);
  }, 300_000); // a child process that trains 5 folds: over 60 s at load average 15

  it('replays the demo conversations on two worker threads (--workers 2) into a FileStore: every conversation, message and episode', async () => {
    const { stdout } = await cli(['replay', '--workers', '2', '--json', '--store-dir', join(dir, 'store-workers')]);
    const report = JSON.parse(stdout);
    expect(report.counts.conversations).toBe(demoLines.length);
    expect(report.counts.failed).toBe(0);
    expect(report.counts.episodes).toBe(demoLines.length);
    expect(report.counts.messages).toBeGreaterThan(demoLines.length);
    // The workers each trained the folds of their share: the fold cut between them twice, 6 trainings in all (5 in one thread).
    expect(report.measurements.trainings).toBe(6);
    expect((await readdir(join(dir, 'store-workers', 'sessions'))).length).toBeGreaterThanOrEqual(demoLines.length);
  }, 120_000);

  it('refuses --workers 0', async () => {
    const error = await failing(['replay', '--workers', '0']);
    expect(error.code).toBe(1);
    expect(error.stderr).toContain('--workers must be a whole number ≥ 1, not "0"');
  }, 60_000);

  it('prints the text report below the Data line', async () => {
    const { stdout } = await cli(['replay', '--limit', '3', '--no-progress', '--store-dir', ':memory:']);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^Data: demo conversations \(82, .*demo\.jsonl\), a sample of 3 stratified by flow$/);
    expect(lines[1]).toMatch(/^Support desk replay: 3 conversations/);
    expect(stdout).toContain('Routing accuracy (right specialist):');
    for (const figure of [
      'Flow accuracy (triage named the flow)',
      'Subflow accuracy (the case a specialist named)',
      'Expected action sequence ran in order',
    ]) {
      expect(stdout).toMatch(
        new RegExp(
          `${figure.replace(/[()]/g, '\\$&')}[^\\n]*: \\d+\\.\\d% \\(\\d+/3; 95% CI \\d+\\.\\d–\\d+\\.\\d%\\)`,
        ),
      );
    }
    expect(stdout).toMatch(/Clarifying questions by triage: \d+, in \d+ of 3 conversations/);
    expect(stdout).toMatch(/Tokens: [\d,]+ \([\d,]+ in, [\d,]+ out\) over \d+ model calls; [\d,]+ per conversation/);
    expect(stdout).toMatch(
      /Offline models trained in: \d+ ms \(the longest of \d trainings?, 82 conversations or fewer each\)/,
    );
  }, 60_000);

  it('says what format it expects when --data names a missing file, and sends nobody to a folder beside the repository', async () => {
    const missing = join(dir, 'missing.jsonl');
    const error = await failing(['replay', '--data', missing]);
    expect(error.code).toBe(1);
    expect(error.stderr).toContain(
      `NotFoundError: No conversation file at ${missing}. Expected JSON Lines: one {"id", "flow", "subflow", "turns"`,
    );
    expect(error.stderr).not.toContain('shared');
  }, 60_000);

  it('reads --data and --store-dir relative to the folder the command was run in (INIT_CWD under pnpm), not the package folder', async () => {
    const caller = join(dir, 'caller');
    await mkdir(caller);
    await writeFile(join(caller, 'two.jsonl'), `${demoLines.slice(0, 2).join('\n')}\n`);
    const { stdout, stderr } = await cli(['replay', '--data', 'two.jsonl', '--store-dir', 'relative-store', '--json'], {
      INIT_CWD: caller,
    });
    expect(stderr.split('\n')[0]).toBe(`Data: conversations (2, ${join(caller, 'two.jsonl')})`);
    expect(JSON.parse(stdout).counts.conversations).toBe(2);
    expect((await readdir(join(caller, 'relative-store'))).length).toBeGreaterThan(0);
  }, 60_000);

  it('trains on --train and replays --eval, without cross-validation', async () => {
    const train = join(dir, 'train.jsonl');
    const evaluate = join(dir, 'eval.jsonl');
    const inFold0 = (line: string) => foldOf(JSON.parse(line).id) === 0;
    await writeFile(train, `${demoLines.filter((line) => !inFold0(line)).join('\n')}\n`);
    await writeFile(evaluate, `${demoLines.filter(inFold0).join('\n')}\n`);
    const trainCount = demoLines.filter((line) => !inFold0(line)).length;
    const evalCount = demoLines.length - trainCount;
    const { stdout, stderr } = await cli([
      'replay',
      '--train',
      train,
      '--eval',
      evaluate,
      '--json',
      '--store-dir',
      ':memory:',
    ]);
    expect(stderr.split('\n')[0]).toBe(
      `Data: trained on conversations (${trainCount}, ${train}), replaying conversations (${evalCount}, ${evaluate})`,
    );
    const report = JSON.parse(stdout);
    expect(report.evaluation).toBe(
      `held out: models learned from ${trainCount} training conversations; none of the replayed conversations is among them`,
    );
    expect(report.counts.conversations).toBe(evalCount);
    expect(report.routing.specialist.total).toBe(evalCount);
  }, 120_000);

  it('refuses --train without --eval', async () => {
    const error = await failing(['replay', '--train', DEMO_DATA_FILE]);
    expect(error.code).toBe(1);
    expect(error.stderr).toContain('ConfigurationError: Use --train FILE together with --eval FILE');
  }, 60_000);

  it('replays with --folds and --cv-seed: the partition is named in the report, as JSON too', async () => {
    const six = join(dir, 'six.jsonl');
    await writeFile(six, `${demoLines.slice(0, 6).join('\n')}\n`);
    const { stdout } = await cli([
      'replay',
      '--data',
      six,
      '--folds',
      '2',
      '--cv-seed',
      'x',
      '--json',
      '--store-dir',
      ':memory:',
    ]);
    const report = JSON.parse(stdout);
    expect(report.evaluation).toBe(
      '2-fold cross-validation (seed x) by sha256 of the conversation id: each conversation routed by models learned from the other 1 fold',
    );
    expect(report.crossValidation).toStrictEqual({ folds: 2, seed: 'x' });
    expect(report.counts.conversations).toBe(6);
    expect(report.measurements.trainings).toBe(
      new Set(demoLines.slice(0, 6).map((line) => foldOf(JSON.parse(line).id, 2, 'x'))).size,
    );
  }, 60_000);

  // Three CLI processes, started together.
  it('refuses --folds/--cv-seed with --train/--eval, --folds out of 2-50 or above the conversations, and a seed of unprintable characters', async () => {
    const two = join(dir, 'two-only.jsonl');
    await writeFile(two, `${demoLines.slice(0, 2).join('\n')}\n`);
    const [withHeldOut, tooMany, moreThanData, badSeed] = await Promise.all([
      failing(['replay', '--train', DEMO_DATA_FILE, '--eval', DEMO_DATA_FILE, '--cv-seed', '1']),
      failing(['replay', '--folds', '51']),
      failing(['replay', '--data', two, '--folds', '3', '--store-dir', ':memory:']),
      failing(['replay', '--cv-seed', 'a\tb']),
    ]);
    expect(withHeldOut.code).toBe(1);
    expect(withHeldOut.stderr).toContain(
      'ConfigurationError: --folds and --cv-seed choose cross-validation folds: --train/--eval evaluate on a held-out file, without cross-validation.',
    );
    expect(tooMany.stderr).toContain('--folds must be a whole number from 2 to 50, not "51"');
    expect(moreThanData.code).toBe(1);
    expect(moreThanData.stderr).toContain(
      'InvalidInputError: Cannot cut 2 conversations into 3 cross-validation folds: use at most 2 folds.',
    );
    expect(badSeed.stderr).toContain('--cv-seed must be 1 to 64 printable ASCII characters, not "a\\tb"');
  }, 120_000);

  it('refuses a --restart-every that is not a whole number', async () => {
    const error = await failing(['replay', '--restart-every', 'often']);
    expect(error.code).not.toBe(0);
    expect(error.stderr).toContain('--restart-every must be a whole number ≥ 0, not "often"');
  }, 60_000);

  // Three CLI processes (each a tsx start-up, 1.5-3 s on an idle machine), started together.
  it('prints help and exits 0, also when pnpm passes a "--" before --help', async () => {
    const [direct, throughPnpm, top] = await Promise.all([
      cli(['replay', '--help']),
      cli(['replay', '--', '--help']),
      cli(['--help']),
    ]);
    expect(direct.stdout).toContain('Usage: desk-eval replay [options]');
    expect(direct.stdout).toContain('--train <file>');
    expect(direct.stdout).toContain('--folds <k>');
    expect(direct.stdout).toContain('--cv-seed <seed>');
    expect(throughPnpm.stdout).toBe(direct.stdout);
    expect(top.stdout).toContain('BATON_ABCD');
  }, 120_000);
});

describe('a replay where conversations fail', () => {
  let server: Server;
  let baseURL: string;
  beforeAll(async () => {
    // A Chat Completions endpoint on loopback that refuses the API key.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided: sk-wrong.',
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('prints the first error above the report and exits 1', async () => {
    const error = await failing(
      ['replay', '--models', 'openai', '--limit', '2', '--no-progress', '--store-dir', ':memory:'],
      { OPENAI_API_KEY: 'sk-wrong', OPENAI_BASE_URL: baseURL },
    );
    expect(error.code).toBe(1);
    expect(error.stderr).toMatch(
      /^2 of 2 conversations failed; the first, demo-\d+: AuthenticationError: .*Incorrect API key/m,
    );
    expect(error.stdout).toContain('Conversations stopped by a failed turn: 2');
  }, 60_000);
});
