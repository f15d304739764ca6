/**
 * Resume and restore: the time to open a session whose history is 500 or 5,000 turns and whose last
 * turn paused on an approval (`workflow.session({ id })`, as a fresh process would: a new workflow
 * and a new store object; for `file-running`, a new workflow on the store that wrote it), then to answer it (`session.respond(id, { approved: true })` until
 * `turn.completed`), on InMemoryStore, FileStore and MongoStore. A second table shows that reading
 * the history does not grow with the number of branches or checkpoints: the same 500-turn session
 * plain, with 100 forks, and with 500 older checkpoints.
 *
 * History is written straight to the store (copies of one real turn's messages, with fresh ids),
 * then one real turn through the workflow pauses on the approval. Each figure is the median over
 * several sessions built alike. Each history length runs twice: the model input holds the whole
 * history (the default), and it holds the last 100 messages (`historyWindow({ messages: 100 })`,
 * which also bounds what opening reads). Targets at 5,000 turns: open + answer < 5 ms on
 * InMemoryStore, < 20 ms on FileStore. `file` opens through a new FileStore object on the same folder
 * (a restarted process); `file-running` through the FileStore that wrote the session (a process that
 * kept running while the approval waited: its cache holds the session). After the table, for FileStore: the time `JSON.parse` alone
 * takes over the log lines holding a whole-history session's messages, the floor of any read of
 * the whole history by a new process.
 *
 * First, the long-vs-short table (`compareBench.ts`): a paused 5,000-turn session against a 50-turn
 * one, opened and answered in a new process, alternating, on FileStore and MongoStore, with the ratio.
 *
 * Run: pnpm bench:resume [--only ratio-file,ratio-mongo,memory,file,file-running,mongo] [--backend sqlite|pg]
 *   (MongoStore on FerretDB 1.24, on SQLite by default or on a PostgreSQL of its own with `--backend pg`,
 *   which filters and sorts in the database; MONGODB_URL overrides the FerretDB it starts)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FileStore, InMemoryStore, type Store } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { startStore } from '../scale/scaleStore.js';
import { type AnswerTiming, answerPaused } from './answerPaused.js';
import { compareLongAndShort } from './compareBench.js';
import type { StoreCounts } from './countingStore.js';
import { preparePausedSession, templateTurn } from './pausedSession.js';

/** `file-running`: FileStore opened through the store object that wrote the session (a running process, its cache warm), not a new one. */
type StoreKind = 'memory' | 'file' | 'file-running' | 'mongo';
/** `ratio-file`, `ratio-mongo`: the long-vs-short table in new processes (`compareBench.ts`), printed first. */
type TableKind = StoreKind | 'ratio-file' | 'ratio-mongo';

/** Makes stores of one kind: `fresh()` is a new store object on the same data (a new process's view). */
interface StoreFactory {
  kind: StoreKind;
  /** FileStore's folder. */
  directory?: string;
  shared: Store;
  fresh(): Promise<Store>;
  closeFresh(store: Store): Promise<void>;
  close(): Promise<void>;
}

async function storeFactory(kind: StoreKind, mongoUrl: () => Promise<string>): Promise<StoreFactory> {
  if (kind === 'memory') {
    const shared = new InMemoryStore();
    return { kind, shared, fresh: async () => shared, closeFresh: async () => {}, close: async () => {} };
  }
  if (kind === 'file' || kind === 'file-running') {
    const directory = await mkdtemp(join(tmpdir(), 'baton-resume-bench-'));
    const shared = new FileStore({ directory });
    const running = kind === 'file-running';
    return {
      kind,
      directory,
      shared,
      fresh: async () => (running ? shared : new FileStore({ directory })),
      closeFresh: async (store) => (running ? undefined : (store as FileStore).close()),
      close: async () => {
        await shared.close();
        await rm(directory, { recursive: true, force: true });
      },
    };
  }
  const url = await mongoUrl();
  const dbName = `baton_resume_${Math.random().toString(36).slice(2, 8)}`;
  const shared = new MongoStore({ url }, { dbName });
  await shared.init();
  return {
    kind,
    shared,
    fresh: async () => {
      const store = new MongoStore({ url }, { dbName });
      await store.init(); // connects and checks indexes before the clock starts, as a running worker would have
      return store;
    },
    closeFresh: async (store) => (store as MongoStore).close(),
    close: async () => {
      await shared.db.dropDatabase();
      await shared.close();
    },
  };
}

type Sample = AnswerTiming;

/** Opens the paused session as a new process would and answers its approval. */
async function openAndAnswer(factory: StoreFactory, id: string, historyWindow?: number): Promise<Sample> {
  const fresh = await factory.fresh();
  try {
    return await answerPaused(fresh, id, historyWindow === undefined ? {} : { historyWindow });
  } finally {
    await factory.closeFresh(fresh);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function profile(counts: StoreCounts): string {
  return Object.entries(counts.calls)
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 4)
    .map(([name, c]) => `${name} ${c.count}× ${c.ms.toFixed(1)} ms`)
    .join(', ');
}

/** The window of the windowed rows (`historyWindow({ messages })`). */
const WINDOW = 100;

/** Sessions built per (store, history length, model input); the median of their figures is printed. */
const COPIES: Record<StoreKind, Record<number, number>> = {
  memory: { 500: 9, 5000: 7 },
  file: { 500: 7, 5000: 5 },
  'file-running': { 500: 7, 5000: 5 },
  mongo: { 500: 3, 5000: 1 },
};

/**
 * What any FileStore read of the whole history costs at least: `JSON.parse` of the log lines that
 * hold session `id`'s messages (read from the file first, not timed), with nothing else (no
 * checksum, no validation, no freezing, no orchestration). Median of `rounds`, in ms.
 */
async function parseFloor(
  directory: string,
  id: string,
  rounds = 5,
): Promise<{ ms: number; bytes: number; messages: number }> {
  const text = await readFile(join(directory, 'sessions', id, 'log.jsonl'), 'utf8');
  const lines = text.split('\n').filter((line) => line.includes('"op":"messages"'));
  const times: number[] = [];
  let messages = 0;
  for (let round = 0; round < rounds; round += 1) {
    const started = performance.now();
    const parsed = lines.map((line) => JSON.parse(line) as { ops: { op: string; messages?: unknown[] }[] });
    times.push(performance.now() - started);
    messages = parsed.reduce((sum, line) => sum + line.ops.reduce((n, op) => n + (op.messages?.length ?? 0), 0), 0);
  }
  return { ms: median(times), bytes: lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0), messages };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', default: 'ratio-file,ratio-mongo,memory,file,file-running,mongo' },
      backend: { type: 'string', default: 'sqlite' },
    },
  });
  const tables = values.only.split(',') as TableKind[];
  const kinds = tables.filter((kind): kind is StoreKind => !kind.startsWith('ratio-'));
  console.log(
    `cores: ${availableParallelism()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}`,
  );
  let server: Awaited<ReturnType<typeof startStore>> | undefined;
  const mongoUrl = async () => {
    server ??= await startStore(values.backend, []);
    return server.url;
  };
  const template = await templateTurn();
  console.log(`one turn = ${template.messages.length} messages (${template.messages.map((m) => m.role).join(', ')})\n`);
  const ratioKinds = tables.flatMap((kind) =>
    kind === 'ratio-file' ? ['file' as const] : kind === 'ratio-mongo' ? ['mongo' as const] : [],
  );
  if (ratioKinds.length > 0) await compareLongAndShort(ratioKinds, template, mongoUrl);
  if (kinds.length === 0) {
    await server?.close();
    return;
  }
  const lines: string[] = [];
  /** The floor of a whole-history FileStore read (see {@link parseFloor}), printed after the table. */
  const floors: string[] = [];
  try {
    console.log(
      '| store | history | model input | open ms | answer ms | open + answer ms | CPU ms | messages read | slowest store calls (one sample) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const kind of kinds) {
      const factory = await storeFactory(kind, mongoUrl);
      try {
        // Warm-up (JIT, connections): three sessions opened and answered unmeasured.
        for (let k = 0; k < 3; k += 1) {
          await preparePausedSession(factory.shared, `warm-up-${k}`, template, 50, {});
          await openAndAnswer(factory, `warm-up-${k}`);
        }
        for (const turns of [500, 5000])
          for (const window of [undefined, WINDOW]) {
            const samples: Sample[] = [];
            for (let k = 0; k < COPIES[kind][turns]!; k += 1) {
              const id = `paused-${turns}-${window ?? 'all'}-${k}`;
              await preparePausedSession(factory.shared, id, template, turns, {});
              samples.push(await openAndAnswer(factory, id, window));
            }
            const open = median(samples.map((s) => s.openMs));
            const answer = median(samples.map((s) => s.answerMs));
            const total = median(samples.map((s) => s.openMs + s.answerMs));
            const cpuMs = median(samples.map((s) => s.cpuMs));
            const input = window === undefined ? 'whole history' : `last ${window} messages`;
            console.log(
              `| ${kind} | ${turns} turns | ${input} | ${open.toFixed(2)} | ${answer.toFixed(2)} | ${total.toFixed(2)} | ${cpuMs.toFixed(2)} | ${samples[0]!.counts.messagesRead} | ${profile(samples.at(-1)!.counts)} |`,
            );
            if (kind === 'file' && window === undefined) {
              const floor = await parseFloor(factory.directory!, `paused-${turns}-all-0`);
              floors.push(
                `FileStore, ${turns} turns: JSON.parse alone of the log lines holding the ${floor.messages} messages (${(floor.bytes / 1e6).toFixed(1)} MB) takes ${floor.ms.toFixed(2)} ms (median of 5), load average ${loadavg()[0]!.toFixed(2)}`,
              );
            }
          }
        for (const [label, extras] of [
          ['plain', {}],
          ['100 forks', { forks: 100 }],
          ['500 older checkpoints', { olderCheckpoints: 500 }],
        ] as const) {
          const samples: Sample[] = [];
          for (let k = 0; k < 5; k += 1) {
            const id = `extras-${label.replace(/\W+/g, '-')}-${k}`;
            await preparePausedSession(factory.shared, id, template, 500, extras);
            samples.push(await openAndAnswer(factory, id));
          }
          lines.push(
            `| ${kind} | ${label} | ${median(samples.map((s) => s.openMs + s.answerMs)).toFixed(2)} | ${median(samples.map((s) => s.cpuMs)).toFixed(2)} | ${samples[0]!.counts.messagesRead} | ${profile(samples.at(-1)!.counts)} |`,
          );
        }
      } finally {
        await factory.close();
      }
    }
    if (floors.length > 0)
      console.log(`\nthe floor of reading the whole history from a file:\n${floors.map((f) => `- ${f}`).join('\n')}`);
    console.log('\nreads against branches and checkpoints (500 turns):\n');
    console.log(
      '| store | session carries | open + answer ms | CPU ms | messages read | slowest store calls (one sample) |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const line of lines) console.log(line);
  } finally {
    await server?.close();
  }
}

await main();
