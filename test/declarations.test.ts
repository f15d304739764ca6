/**
 * The built declarations of `@baton/handoff` type-check in a project that checks libraries
 * (`skipLibCheck: false`) with the `ESNext` lib, whose `esnext.disposable` makes every
 * `AsyncGenerator` async-disposable: `TurnStream` declares `[Symbol.asyncDispose]`, so it is a
 * whole `AsyncGenerator` there and `await using` takes it. Builds core and handoff first (about 20 s).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

const execFileAsync = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
let dir: string;

beforeAll(async () => {
  await execFileAsync(
    'npx',
    ['--yes', 'pnpm@10.34.8', '--filter', '@baton/core', '--filter', '@baton/handoff', 'build'],
    { cwd: repoRoot },
  );
  // Inside test/, so `@baton/handoff` resolves to the workspace package (its `types`: dist).
  dir = await mkdtemp(join(repoRoot, 'test', '.declarations-'));
}, 180_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test('a TurnStream is an AsyncGenerator and async-disposable under skipLibCheck: false and lib ESNext', async () => {
  await writeFile(
    join(dir, 'consumer.ts'),
    [
      "import type { TurnStream } from '@baton/handoff';",
      'export async function firstEvent(stream: TurnStream): Promise<string | undefined> {',
      '  await using turn = stream;',
      '  const generator: AsyncGenerator<unknown, void> = turn;',
      '  for await (const event of turn) return event.type;',
      '  return generator === turn ? undefined : undefined;',
      '}',
      '',
    ].join('\n'),
  );
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ESNext'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
  const result = await execFileAsync('npx', ['--no-install', 'tsc', '-p', join(dir, 'tsconfig.json')], {
    cwd: repoRoot,
  }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  expect(result).toBe('');
}, 120_000);
