import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATA_FILE } from '../src/abcdData.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
// The package's own scripts run the CLI this way (see package.json "start").
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(tsx, ['--conditions=source', 'src/cli.ts', ...args], { cwd: root, env: { ...process.env, OPENAI_API_KEY: '', MONGODB_URL: '', ...env } });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('support-desk CLI', () => {
  it('replays conversations offline into a FileStore and prints the report as JSON', async () => {
    const { stdout } = await cli(['replay', '--limit', '3', '--json', '--store-dir', join(dir, 'store')]);
    const report = JSON.parse(stdout);
    expect(report.counts.conversations).toBe(3);
    expect(report.routing.specialist.total).toBe(3);
    expect(report.evaluation).toContain('5-fold cross-validation');
    expect(report.store).toContain('file');
    expect(report.measurements.bytesPerMessage).toBeGreaterThan(0);
    expect((await readdir(join(dir, 'store'))).length).toBeGreaterThan(0);
  }, 60_000);

  it('says where the data comes from when --data names a missing file', async () => {
    const missing = join(dir, 'missing.jsonl');
    const error = (await cli(['replay', '--data', missing]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(1);
    expect(error.stderr).toContain(`NotFoundError: No conversation file at ${missing}`);
    expect(error.stderr).toContain('ABCD');
  }, 60_000);

  it('reads --data and --store-dir relative to the folder the command was run in (INIT_CWD under pnpm), not the package folder', async () => {
    const caller = join(dir, 'caller');
    await mkdir(caller);
    const lines = (await readFile(DEFAULT_DATA_FILE, 'utf8')).split('\n').slice(0, 2).join('\n');
    await writeFile(join(caller, 'two.jsonl'), `${lines}\n`);
    const { stdout } = await cli(['replay', '--data', 'two.jsonl', '--store-dir', 'relative-store', '--json'], { INIT_CWD: caller });
    expect(JSON.parse(stdout).counts.conversations).toBe(2);
    expect((await readdir(join(caller, 'relative-store'))).length).toBeGreaterThan(0);
  }, 60_000);

  it('refuses a --restart-every that is not a whole number', async () => {
    const error = (await cli(['replay', '--restart-every', 'often']).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).not.toBe(0);
    expect(error.stderr).toContain('--restart-every must be a whole number ≥ 0, not "often"');
  }, 60_000);
});
