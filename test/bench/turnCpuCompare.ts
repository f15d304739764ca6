/**
 * CPU time per handoff turn (the turn of turnCpu.ts) of this checkout against another checkout of
 * Baton, in one process: rounds of 50 sessions × 20 turns alternate between the two (ABAB, then
 * BABA), so both see the same load at the same moments, which separate runs on a shared machine do
 * not. Each checkout runs its own sources (`@baton/*` resolved from its own `node_modules`); the
 * other checkout must be installed. Prints the median of the measured rounds of each and every round
 * in µs of process CPU per turn, with the load average. With `--store file` each checkout runs on its
 * own `FileStore` in a temp folder instead: 4 sessions made 100 turns long first, then rounds of 40
 * turns each (160 per round), as `fileStoreTurnVsAppend.ts` runs them; the CPU counted includes the
 * thread pool's (`fdatasync`).
 * Run: node --conditions=source --import tsx test/bench/turnCpuCompare.ts --base-ref <commit> [--rounds 20] [--store memory|file]
 * (`--base-ref` makes the other checkout itself: a detached `git worktree` of that commit in the temp
 * folder, `baton-base-<commit>`, installed with pnpm; kept and reused by later runs; remove it with
 * `git worktree remove <folder>`), or `--base <other checkout>` for one made by hand
 * (`git worktree add --detach ../base <commit> && cd ../base && npx --yes pnpm@10.34.8 install --frozen-lockfile`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const here = fileURLToPath(new URL('../..', import.meta.url));

/** A worktree of `ref` in the temp folder, installed; made on first use, reused after. */
function baseWorktree(ref: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-C', here, ...args], { encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--short=10', `${ref}^{commit}`);
  const dir = join(tmpdir(), `baton-base-${commit}`);
  if (!existsSync(join(dir, 'node_modules'))) {
    if (!existsSync(dir)) git('worktree', 'add', '--detach', dir, commit);
    console.log(`installing ${commit} in ${dir}`);
    execFileSync('npx', ['--yes', 'pnpm@10.34.8', 'install', '--frozen-lockfile'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

const baseRef = arg('--base-ref');
const baseDir = baseRef === undefined ? arg('--base') : baseWorktree(baseRef);
if (baseDir === undefined)
  throw new Error('Pass --base-ref <commit> (or --base <another checkout of Baton>, installed) to compare with.');
const rounds = Number(arg('--rounds') ?? 20);
const storeKind = arg('--store') ?? 'memory';
if (storeKind !== 'memory' && storeKind !== 'file') throw new Error(`--store takes memory or file, not ${storeKind}.`);
const folders: string[] = [];
if (!Number.isInteger(rounds) || rounds < 2)
  throw new Error(`--rounds takes an integer of at least 2, not ${arg('--rounds')}.`);

interface BenchSession {
  send(text: string): AsyncIterable<unknown>;
}

/** What one checkout provides: its bench workflow on its own store (and, on FileStore, its long sessions). */
interface Checkout {
  name: string;
  workflow: { session(options: { id: string }): Promise<BenchSession> };
  long: BenchSession[];
}

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events) {
    // drain
  }
}

async function checkout(name: string, dir: string): Promise<Checkout> {
  const root = resolve(dir);
  const desk = await import(pathToFileURL(resolve(root, 'test/bench/handoffDesk.ts')).href);
  const core = await import(pathToFileURL(resolve(root, 'packages/core/src/index.ts')).href);
  if (storeKind === 'memory') return { name, workflow: desk.handoffDesk(new core.InMemoryStore()), long: [] };
  const folder = await mkdtemp(join(tmpdir(), 'baton-turn-cpu-compare-'));
  folders.push(folder);
  const workflow = desk.handoffDesk(new core.FileStore({ directory: folder }));
  const long: BenchSession[] = [];
  for (let s = 0; s < 4; s += 1) {
    const session: BenchSession = await workflow.session({ id: `long-${s}` });
    for (let t = 0; t < 100; t += 1) await drain(session.send(`message ${t}`));
    long.push(session);
  }
  return { name, workflow, long };
}

let sessions = 0;
/** µs of process CPU per turn: over 50 new sessions of 20 turns each, or on FileStore 40 more turns of each long session. */
async function round({ workflow, long }: Checkout): Promise<number> {
  const start = process.cpuUsage();
  let turns = 0;
  if (storeKind === 'file') {
    for (let t = 0; t < 40; t += 1) for (const session of long) await drain(session.send(`message ${t}`));
    turns = 40 * long.length;
  } else {
    for (let s = 0; s < 50; s += 1) {
      sessions += 1;
      const session = await workflow.session({ id: `compare-${sessions}` });
      for (let t = 0; t < 20; t += 1) await drain(session.send(`message ${t}`));
    }
    turns = 1000;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / turns;
}

const base = await checkout(`base (${baseRef ?? baseDir})`, baseDir);
const head = await checkout(
  `this checkout (${execFileSync('git', ['-C', here, 'rev-parse', '--short=10', 'HEAD'], { encoding: 'utf8' }).trim()})`,
  here,
);
// Warm-up: both JIT-compiled before anything is measured.
for (let i = 0; i < 4; i += 1) {
  await round(base);
  await round(head);
}
const times = new Map<Checkout, number[]>([
  [base, []],
  [head, []],
]);
for (let i = 0; i < rounds; i += 1) {
  for (const c of i % 2 === 0 ? [base, head] : [head, base]) times.get(c)!.push(await round(c));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [c, values] of times) {
  console.log(
    `${c.name}: CPU µs per turn median ${Math.round(median(values))} (rounds ${values.map(Math.round).join(', ')})`,
  );
}
const ratios = times.get(head)!.map((value, i) => value / times.get(base)![i]!);
console.log(
  `this checkout ÷ base: ${median(ratios).toFixed(2)} (median of the per-round ratios; ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
);
console.log(
  `${storeKind === 'file' ? 'FileStore' : 'InMemoryStore'}; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
);
for (const folder of folders) await rm(folder, { recursive: true, force: true });
