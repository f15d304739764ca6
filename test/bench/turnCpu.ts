/**
 * CPU time of Baton's orchestration per handoff turn on InMemoryStore, measured long enough to
 * compare two commits on a loaded machine: the classic turn of handoff.bench.ts (the coordinator
 * hands off, the specialist answers; two instant ScriptedModel calls), 100 sessions × 20 turns per
 * round, 5 rounds after a warm-up; prints the median and every round in µs of process CPU per turn.
 * No OpenTelemetry SDK is registered, so tracing costs what it costs an application without one.
 * With `--alloc` it then runs one more round under the inspector's sampling heap profiler (objects
 * collected by either garbage collector counted too) and prints the bytes allocated per turn: a
 * figure that, unlike CPU time, hardly moves with what else the machine runs, and the 15 functions
 * that allocated most of it (bytes per turn by the allocating function).
 * The first line printed says which code ran: the packages' TypeScript sources through tsx
 * (`--conditions=source`; tsx's transform adds a `__name` call to every function it creates) or
 * their compiled `dist/` (what an application that installs Baton runs; `pnpm build` first).
 * Run: node --conditions=source --import tsx test/bench/turnCpu.ts [--alloc]   (sources)
 *      npx --yes pnpm@10.34.8 build && node --import tsx test/bench/turnCpu.ts [--alloc]   (dist)
 */
import { Session } from 'node:inspector/promises';
import { InMemoryStore } from '@baton/core';
import { handoffDesk } from './handoffDesk.js';

const measured = import.meta.resolve('@baton/core').includes('/dist/')
  ? 'compiled dist/ (pnpm build)'
  : 'TypeScript sources through tsx';
console.log(`measuring @baton/core and @baton/handoff from their ${measured}`);
const workflow = handoffDesk(new InMemoryStore());
let sessions = 0;

/** µs of process CPU per turn over `count` new sessions of `turns` turns each. */
async function round(count: number, turns: number): Promise<number> {
  const start = process.cpuUsage();
  for (let s = 0; s < count; s += 1) {
    sessions += 1;
    const session = await workflow.session({ id: `cpu-${sessions}` });
    for (let t = 0; t < turns; t += 1) {
      for await (const _ of session.send(`message ${t}`)) {
        // drain
      }
    }
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (count * turns);
}

await round(50, 10);
const rounds: number[] = [];
for (let i = 0; i < 5; i += 1) rounds.push(await round(100, 20));
const sorted = [...rounds].sort((a, b) => a - b);
console.log(
  `CPU µs per turn: median ${Math.round(sorted[2]!)} (rounds ${rounds.map(Math.round).join(', ')}; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`,
);

if (process.argv.includes('--alloc')) {
  const inspector = new Session();
  inspector.connect();
  await inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await round(100, 20);
  const { profile } = await inspector.post('HeapProfiler.stopSampling');
  inspector.disconnect();
  /** Every sampled allocation's bytes (V8 scales samples to estimate all allocations). */
  const bytes = (node: typeof profile.head): number =>
    node.children.reduce((sum, child) => sum + bytes(child), node.selfSize);
  console.log(`bytes allocated per turn (sampled, 100 sessions × 20 turns): ${Math.round(bytes(profile.head) / 2000)}`);
  // Where they were allocated: bytes per turn by the allocating function (inlined callees are named themselves).
  const byFunction = new Map<string, number>();
  const visit = (node: typeof profile.head): void => {
    const { functionName, url } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(packages|node_modules|test)\//, '$1/')}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child);
  };
  visit(profile.head);
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 15);
  console.log(
    `allocating functions, bytes per turn:\n${top.map(([key, size]) => `  ${String(Math.round(size / 2000)).padStart(6)}  ${key}`).join('\n')}`,
  );
}
