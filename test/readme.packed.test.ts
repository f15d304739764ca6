/**
 * The root README's example runs in a fresh project outside this repository, the way its "Using Baton
 * in another project" section says: the packages are built and packed with pnpm (which rewrites
 * their `workspace:*` ranges to the real versions), a new project is made with `npm init -y` and
 * `npm pkg set type=module`, the tarballs, zod and tsx are installed with npm, and the README's code
 * block, extracted from README.md, is run with tsx. Without `"type": "module"` the same file fails
 * on its top-level await, as the README warns. Each package (and core's subpaths) also loads under
 * plain Node from its `dist`, the packed `@baton/cli` installs the `baton` command, and
 * examples/quickstart's two files run there as they are, twice on one folder. `openai` is an
 * optional peer of `@baton/core`, so it is not installed (the README runs without it), and
 * `@baton/core/openai` loads once the app installs it. This installs from the npm registry (or npm's
 * cache) and takes one to two minutes.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { codeBlockAfter } from './support/readmeCode.js';

const execFileAsync = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const PNPM = ['--yes', 'pnpm@10.34.8'];
const PACKAGES = ['core', 'handoff', 'memory', 'store-mongo', 'ai-sdk', 'server', 'cli'];

/** Runs a command and returns what it printed; on failure, throws with its stdout and stderr. */
async function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 300_000,
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(command, args, { cwd, env: childEnv(), maxBuffer: 16 << 20, timeout: timeoutMs });
  } catch (error) {
    const e = error as { message: string; stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
      { cause: error },
    );
  }
}

/**
 * The environment without the npm_* variables of a surrounding `pnpm test` (its package, its lifecycle),
 * and without OPENAI_API_KEY, so the quickstart runs offline as the examples here expect.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_(package_|lifecycle_|command$|execpath$|node_execpath$)|^OPENAI_API_KEY$/.test(key)) env[key] = value;
  }
  return env;
}

let work: string;
let app: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'baton-readme-packed-'));
  const packs = join(work, 'packs');
  app = join(work, 'app');
  // Nine tsc builds one after another: 2–3 minutes on two idle cores, over 5 under a load of 25.
  await run('npx', [...PNPM, '--filter', './packages/*', 'build'], repoRoot, 600_000);
  for (const name of PACKAGES) {
    await run('npx', [...PNPM, 'pack', '--pack-destination', packs], join(repoRoot, 'packages', name));
  }
  const tarballs = (await readdir(packs)).filter((file) => file.endsWith('.tgz')).map((file) => join(packs, file));
  expect(tarballs).toHaveLength(PACKAGES.length);

  await mkdir(app);
  await run('npm', ['init', '-y'], app);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs, 'zod', 'tsx'], app);
  await writeFile(
    join(app, 'example.ts'),
    await codeBlockAfter(new URL('../README.md', import.meta.url), '## A small example', 'ts'),
  );
}, 900_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

test('under npm init\'s default "type": "commonjs" the example fails on its top-level await, as the README says', async () => {
  await run('npm', ['pkg', 'delete', 'type'], app);
  const failed = await run('npx', ['tsx', 'example.ts'], app).then(
    () => undefined,
    (error: Error) => error,
  );
  expect(failed?.message).toMatch(/Top-level await is currently not supported with the "cjs" output format/);
});

test('after `npm pkg set type=module` the example runs from the installed tarballs and prints the turn, the approval, the transcript and "closed"', async () => {
  await run('npm', ['pkg', 'set', 'type=module'], app);
  const { stdout } = await run('npx', ['tsx', 'example.ts'], app);
  const lines = stdout.trimEnd().split('\n');

  for (const type of ['turn.started', 'handoff', 'tool.call', 'request', 'turn.completed'])
    expect(lines).toContain(type);
  expect(lines).not.toContain('error');
  expect(stdout).toMatch(/type: 'tool_approval'[\s\S]*toolName: 'refund_order'/);
  expect(lines.slice(-7)).toEqual([
    'user - I was charged twice for order 1234',
    'assistant triage handoff_to_billing',
    'tool triage Transferred to billing.',
    'assistant billing refund_order',
    'tool billing {"orderId":"1234","refunded":true}',
    'assistant billing Refunded.',
    'closed',
  ]);
});

test('examples/quickstart, its two files copied into the project, runs and resumes after a restart', async () => {
  for (const file of ['quickstart.ts', 'desk.ts']) {
    await copyFile(join(repoRoot, 'examples', 'quickstart', 'src', file), join(app, file));
  }
  const data = join(work, 'quickstart-data');
  const first = await run('npx', ['tsx', 'quickstart.ts', data], app);
  expect(first.stdout).toContain("|| paused: refund_order needs a human's approval");
  const second = await run('npx', ['tsx', 'quickstart.ts', data], app);
  expect(second.stdout).toContain('chat-1 is paused: billing wants refund_order({"orderId":"1234"}). Approving.');
  expect(second.stdout).toContain('billing: Done: the duplicate charge of 42.00 EUR on order 1234 is refunded.');
  expect(second.stdout).toContain('    | 1. Conversation chat-1 (');
  expect(second.stdout).toContain('And yes: last time we refunded the double charge on it.');
  // The installed FileStore took its kernel lock (fs-native-extensions' prebuilt binary loaded): a lock file, not
  // the lock folder of the fallback.
  const lock = await stat(join(data, 'locks', 'chat-1.lock'));
  expect(lock.isFile()).toBe(true);
});

test('the packed @baton/handoff asks for @baton/core by version (pnpm pack rewrote workspace:*) and shares the installed core', async () => {
  const handoff = JSON.parse(
    await readFile(join(app, 'node_modules', '@baton', 'handoff', 'package.json'), 'utf8'),
  ) as { dependencies: Record<string, string> };
  expect(handoff.dependencies['@baton/core']).toBe('0.1.0');
  expect(existsSync(join(app, 'node_modules', '@baton', 'handoff', 'node_modules', '@baton', 'core'))).toBe(false);
  const core = JSON.parse(await readFile(join(app, 'node_modules', '@baton', 'core', 'package.json'), 'utf8')) as {
    version: string;
  };
  expect(core.version).toBe('0.1.0');
});

test('installing the packed @baton/core does not install openai (an optional peer) nor the MCP SDK', async () => {
  expect(existsSync(join(app, 'node_modules', 'openai'))).toBe(false);
  expect(existsSync(join(app, 'node_modules', '@modelcontextprotocol', 'sdk'))).toBe(false);
  const core = JSON.parse(await readFile(join(app, 'node_modules', '@baton', 'core', 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  expect(core.dependencies.openai).toBeUndefined();
  expect(core.peerDependenciesMeta.openai?.optional).toBe(true);
  expect(Object.keys(core.peerDependencies).sort()).toEqual(['@modelcontextprotocol/sdk', 'openai', 'zod']);
});

test('every packed package loads under plain Node from its built dist, subpaths included', async () => {
  const probe = [
    "const core = await import('@baton/core');",
    "const testing = await import('@baton/core/testing');",
    "const storeKit = await import('@baton/core/store-kit');",
    "const handoff = await import('@baton/handoff');",
    "const memory = await import('@baton/memory');",
    "const mongo = await import('@baton/store-mongo');",
    "const aisdk = await import('@baton/ai-sdk');",
    "const server = await import('@baton/server');",
    "const serverNode = await import('@baton/server/node');",
    "const cli = await import('@baton/cli');",
    'console.log([typeof core.FileStore, typeof testing.ScriptedModel, typeof handoff.HandoffBuilder,',
    '  typeof memory.EpisodicMemory, typeof mongo.MongoStore, typeof aisdk.AISDKModel,',
    '  typeof server.createBatonApp, typeof serverNode.serveBaton, typeof cli.inspectSession,',
    '  typeof storeKit.planAppend].join());',
    "console.log(import.meta.resolve('@baton/handoff'));",
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], app);
  const [types, resolved] = stdout.trim().split('\n');
  expect(types).toBe(Array(10).fill('function').join());
  expect(resolved).toMatch(/\/node_modules\/@baton\/handoff\/dist\/index\.js$/);
});

test('the packed @baton/cli installs the `baton` command', async () => {
  const { stdout } = await run('npx', ['--no-install', 'baton', 'inspect', '--help'], app);
  expect(stdout).toMatch(/Usage: baton inspect \[options\]/);
  expect(stdout).toContain('--store <spec>');
});

test('@baton/core/openai names the missing openai package until the app installs it, then loads', async () => {
  const probe = "const openai = await import('@baton/core/openai'); console.log(typeof openai.OpenAIChatModel);";
  const missing = await run(process.execPath, ['--input-type=module', '-e', probe], app).then(
    () => undefined,
    (error: Error) => error,
  );
  expect(missing?.message).toMatch(/Cannot find package 'openai'/);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', 'openai@6'], app);
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], app);
  expect(stdout.trim()).toBe('function');
});
