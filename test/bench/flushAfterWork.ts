/**
 * How long an `fdatasync`'d append waits on this disk, by what the process did just before it: no
 * Baton at all, only `node:fs`. The FileStore bench (`fileStoreTurnVsAppend.ts`) compares a turn
 * with appends made back to back; a turn's own flush always follows a turn's worth of JavaScript.
 * This prints what that difference costs the flush alone, so the ratio can be read on this machine.
 *
 * Each operation writes `--bytes` (default 1,800, a handoff turn's line) to one of 4 files, round
 * robin (a FileStore's 4 sessions), and awaits `fdatasync` on the thread pool (as FileStore does).
 * Before each one, by side:
 * - back to back: nothing;
 * - after spinning: a loop reading the clock for `--work-us` (default 1,000 µs, about a handoff turn's
 *   CPU on this machine), no allocation;
 * - after allocating: the same time spent making small objects, as JavaScript that allocates does
 *   (the collector's threads run alongside);
 * - after sleeping: a timer of `--work-us`, the process idle.
 *
 * The sides take turns, `--per-round` operations each, for `--rounds` rounds; the wait of every
 * flush (from the call to its callback) is kept, and the bench prints median, p90, p99 and mean per
 * side, and each side's mean ÷ the back-to-back mean.
 *
 * Run: `node --import tsx test/bench/flushAfterWork.ts [--rounds 10] [--per-round 40] [--work-us 1000] [--bytes 1800] [--dir <folder on the disk to measure>]`
 */
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    'per-round': { type: 'string', default: '40' },
    'work-us': { type: 'string', default: '1000' },
    bytes: { type: 'string', default: '1800' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const rounds = Number(values.rounds);
const perRound = Number(values['per-round']);
const workUs = Number(values['work-us']);
const bytes = Buffer.alloc(Number(values.bytes), 0x61);

const dir = mkdtempSync(join(values.dir, 'baton-flush-after-work-'));
const files = [0, 1, 2, 3].map((i) => openSync(join(dir, `log-${i}`), 'a'));

let sink = 0;
const kept: object[] = [];
const sides: Record<string, () => void | Promise<void>> = {
  'back to back': () => {},
  [`after spinning ${workUs} µs`]: () => {
    const end = performance.now() + workUs / 1000;
    while (performance.now() < end) sink += 1;
  },
  [`after allocating for ${workUs} µs`]: () => {
    const end = performance.now() + workUs / 1000;
    while (performance.now() < end) {
      kept.push({ seq: kept.length, text: `message ${kept.length}`, parts: [1, 2, 3] });
      if (kept.length > 100_000) kept.length = 0;
    }
  },
  [`after sleeping ${workUs} µs`]: () => new Promise((resolve) => setTimeout(resolve, workUs / 1000)),
};

/** One append and its flush, as FileStore makes them; resolves to the flush's wait in µs. */
function appendAndFlush(fd: number): Promise<number> {
  writeSync(fd, bytes);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    fdatasync(fd, (error) => (error ? reject(error) : resolve((performance.now() - started) * 1000)));
  });
}

const waits = new Map<string, number[]>(Object.keys(sides).map((name) => [name, []]));
const names = Object.keys(sides);
try {
  for (let round = 0; round < rounds; round += 1) {
    for (let k = 0; k < names.length; k += 1) {
      const name = names[(round + k) % names.length]!; // each side goes first in turn
      for (let i = 0; i < perRound; i += 1) {
        await sides[name]!();
        waits.get(name)!.push(await appendAndFlush(files[i % files.length]!));
      }
    }
  }
} finally {
  for (const fd of files) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
}

const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const reference = mean(waits.get('back to back')!);
console.log(
  `fdatasync'd append of ${bytes.length} B to 4 files round robin (${values.dir}), ${rounds} rounds of ${perRound} per side, alternating; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
);
console.log('\n| before the append | flush wait µs: median | p90 | p99 | mean | mean ÷ back to back |');
console.log('|---|---|---|---|---|---|');
for (const [name, list] of waits) {
  const sorted = [...list].sort((a, b) => a - b);
  console.log(
    `| ${name} | ${at(sorted, 0.5).toFixed(0)} | ${at(sorted, 0.9).toFixed(0)} | ${at(sorted, 0.99).toFixed(0)} | ${mean(list).toFixed(0)} | ${(mean(list) / reference).toFixed(2)}× |`,
  );
}
if (sink < 0) console.log(sink); // keeps the spin loop from being optimised away
