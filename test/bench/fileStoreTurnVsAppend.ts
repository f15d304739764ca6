/**
 * A FileStore handoff turn against its reference: the fdatasync'd append of the same bytes to a file on
 * the same disk, measured in one process, rounds alternating (turns, appends, appends, turns, ...), so both
 * see the same disk and the same load at nearly the same moments. The turn is handoffDesk.ts's (the
 * coordinator hands off, the specialist answers; two instant ScriptedModel calls) on sessions already
 * `--history` turns long (default 100); each turn's bytes are what its session's folder grew by (a turn that
 * compacted its session's log, which shrinks the folder, is referred to the round's median bytes). The
 * reference appends, for each turn of the round before, a buffer of that turn's size to one file (opened
 * once, as a log is) and flushes it with `fdatasync`: the disk's floor for that durability point, with no
 * work around it. A third side splits the turn's cost: the same turn on an `InMemoryStore` (sessions as
 * long) followed by the fdatasync'd append of the FileStore turn's bytes, the floor of a durable turn of
 * this workflow in this process (what the turn costs wherever it is stored, plus the disk's floor). The
 * upkeep a FileStore write leaves (a compaction, an index write: they run after the write returns) runs
 * between the timed turns, while the folder is measured, as it would in a conversation's pauses;
 * `turnCpuCompare.ts --store file` counts the process's whole CPU, upkeep included. Prints
 * per side the median over rounds of the mean wall µs per operation (and the process CPU µs), the
 * lowest–highest round, and the ratios turn ÷ append and turn ÷ floor (median of the per-round ratios,
 * and the highest and lowest), with the load average. The three sides take turns going first.
 *
 * Run: node --conditions=source --import tsx test/bench/fileStoreTurnVsAppend.ts
 *        [--history 100] [--rounds 12] [--turns 40] [--sessions 4]
 */
import { closeSync, fdatasync as fdatasyncCallback, openSync, writeSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { FileStore, InMemoryStore } from '@baton/core';
import type { HandoffSession } from '@baton/handoff';
import { handoffDesk } from './handoffDesk.js';

const fdatasync = promisify(fdatasyncCallback);
const { values } = parseArgs({
  options: {
    history: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '12' },
    turns: { type: 'string', default: '40' },
    sessions: { type: 'string', default: '4' },
  },
});
const history = Number(values.history);
const rounds = Number(values.rounds);
const turnsPerRound = Number(values.turns);
const sessionCount = Number(values.sessions);
for (const [name, value] of Object.entries({ history, rounds, turnsPerRound, sessionCount }))
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a positive integer, not ${value}`);

/** The bytes of the files under `dir`; a file removed meanwhile (a compaction's or an index write's temp file) counts 0. */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += await stat(join(entry.parentPath, entry.name)).then((s) => s.size, gone);
  return total;
}

function gone(error: unknown): number {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
  throw error;
}

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events) {
    // drain
  }
}

/** One side's round: mean wall and process CPU µs per operation. */
interface Round {
  wallUs: number;
  cpuUs: number;
}

const dir = await mkdtemp(join(tmpdir(), 'baton-bench-turn-vs-append-'));
try {
  const storeDir = join(dir, 'store');
  const workflow = handoffDesk(new FileStore({ directory: storeDir }));
  const sessions: { session: HandoffSession; folder: string; turns: number }[] = [];
  for (let s = 0; s < sessionCount; s += 1) {
    const session = await workflow.session({ id: `s-${s}` });
    for (let t = 0; t < history; t += 1) await drain(session.send(`message ${t}`));
    sessions.push({ session, folder: join(storeDir, 'sessions', `s-${s}`), turns: history });
  }
  const inMemory = handoffDesk(new InMemoryStore());
  const memorySessions: { session: HandoffSession; turns: number }[] = [];
  for (let s = 0; s < sessionCount; s += 1) {
    const session = await inMemory.session({ id: `s-${s}` });
    for (let t = 0; t < history; t += 1) await drain(session.send(`message ${t}`));
    memorySessions.push({ session, turns: history });
  }
  const appendPath = join(dir, 'append.log');
  let lastSizes: number[] = [];
  let compactions = 0;

  /** `turnsPerRound` turns, round-robin over the sessions; each turn timed alone, its bytes measured after. */
  async function turnRound(): Promise<Round> {
    let wall = 0;
    let cpu = 0;
    const sizes: number[] = [];
    for (let i = 0; i < turnsPerRound; i += 1) {
      const entry = sessions[i % sessions.length]!;
      const before = await folderBytes(entry.folder);
      const cpu0 = process.cpuUsage();
      const started = performance.now();
      await drain(entry.session.send(`message ${entry.turns}`));
      wall += performance.now() - started;
      const used = process.cpuUsage(cpu0);
      cpu += used.user + used.system;
      entry.turns += 1;
      sizes.push((await folderBytes(entry.folder)) - before);
    }
    // A turn that compacted its session's log shrank the folder: its reference is the round's typical turn.
    const grown = sizes.filter((size) => size > 0).sort((a, b) => a - b);
    const typical = grown[Math.floor(grown.length / 2)] ?? 1;
    compactions += sizes.length - grown.length;
    lastSizes = sizes.map((size) => (size > 0 ? size : typical));
    return { wallUs: (wall * 1000) / turnsPerRound, cpuUs: cpu / turnsPerRound };
  }

  /** One fdatasync'd append per turn of the last turn round, of that turn's bytes. */
  async function appendRound(): Promise<Round> {
    const fd = openSync(appendPath, 'a');
    let wall = 0;
    let cpu = 0;
    try {
      for (const size of lastSizes) {
        const bytes = Buffer.alloc(size, 0x61);
        const cpu0 = process.cpuUsage();
        const started = performance.now();
        writeSync(fd, bytes);
        await fdatasync(fd);
        wall += performance.now() - started;
        const used = process.cpuUsage(cpu0);
        cpu += used.user + used.system;
      }
    } finally {
      closeSync(fd);
    }
    return { wallUs: (wall * 1000) / lastSizes.length, cpuUs: cpu / lastSizes.length };
  }

  /** The floor: per turn of the last turn round, the same turn in memory, then the fdatasync'd append of its bytes. */
  async function floorRound(): Promise<Round> {
    const fd = openSync(appendPath, 'a');
    let wall = 0;
    let cpu = 0;
    try {
      for (let i = 0; i < lastSizes.length; i += 1) {
        const entry = memorySessions[i % memorySessions.length]!;
        const bytes = Buffer.alloc(lastSizes[i]!, 0x61);
        const cpu0 = process.cpuUsage();
        const started = performance.now();
        await drain(entry.session.send(`message ${entry.turns}`));
        writeSync(fd, bytes);
        await fdatasync(fd);
        wall += performance.now() - started;
        const used = process.cpuUsage(cpu0);
        cpu += used.user + used.system;
        entry.turns += 1;
      }
    } finally {
      closeSync(fd);
    }
    return { wallUs: (wall * 1000) / lastSizes.length, cpuUs: cpu / lastSizes.length };
  }

  // Warm-up: one round of each, not counted.
  await turnRound();
  await appendRound();
  await floorRound();
  const turns: Round[] = [];
  const appends: Round[] = [];
  const floors: Round[] = [];
  for (let r = 0; r < rounds; r += 1) {
    // The sides take turns going first. The appends and the floor take the sizes of the last turn
    // round: a round that does not start with the turns refers to the previous round's.
    const order = [
      async () => turns.push(await turnRound()),
      async () => appends.push(await appendRound()),
      async () => floors.push(await floorRound()),
    ];
    for (let k = 0; k < order.length; k += 1) await order[(r + k) % order.length]!();
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const ratios = turns.map((t, i) => t.wallUs / appends[i]!.wallUs);
  const floorRatios = turns.map((t, i) => t.wallUs / floors[i]!.wallUs);
  const spread = (xs: number[]) =>
    `${median(xs).toFixed(2)}× (median of the per-round ratios; highest ${Math.max(...xs).toFixed(2)}×, lowest ${Math.min(...xs).toFixed(2)}×)`;
  const meanBytes = lastSizes.reduce((a, b) => a + b, 0) / lastSizes.length;
  const row = (name: string, xs: Round[]) => {
    const wall = xs.map((x) => x.wallUs);
    return `| ${name} | ${median(wall).toFixed(0)} | ${Math.min(...wall).toFixed(0)}–${Math.max(...wall).toFixed(0)} | ${median(xs.map((x) => x.cpuUs)).toFixed(0)} |`;
  };
  const reached = history + (rounds + 1) * Math.ceil(turnsPerRound / sessionCount);
  console.log(
    [
      `FileStore handoff turn at ${history}–${reached} turns of history (${sessionCount} sessions)`,
      `against the fdatasync'd append of its bytes (${meanBytes.toFixed(0)} B on average), same disk (${dir});`,
      `${compactions} turns compacted a log (their reference: the round's median bytes);`,
      `${rounds} rounds of ${turnsPerRound} each, alternating;`,
      `load average ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cores\n`,
    ].join(' '),
  );
  console.log(
    '| operation | wall µs per operation (median of rounds) | lowest–highest round | process CPU µs (median) |',
  );
  console.log('|---|---|---|---|');
  console.log(row('FileStore handoff turn', turns));
  console.log(row(`fdatasync'd append of the turn's bytes`, appends));
  console.log(row(`floor: the turn on InMemoryStore, then that append`, floors));
  console.log(`\nturn ÷ append: ${spread(ratios)}`);
  console.log(`turn ÷ floor: ${spread(floorRatios)}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
