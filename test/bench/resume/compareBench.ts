/**
 * The resume bench's long-vs-short table: opening a paused 5,000-turn session and answering its
 * approval against the same for a 50-turn session, in the same run, alternating (50 then 5,000,
 * then 5,000 then 50, …), each in a NEW process (`openInChild.ts`: a restarted server, the store's
 * cache empty, warmed up on another session first), on FileStore and on MongoStore. The model input
 * is bounded, as a long conversation's is: by a `historyWindow` of 100 messages, or by working
 * memory's budget of 2,000 tokens (opening reads backwards until that budget is filled). Target: 5,000 turns within 2×
 * of 50 turns (the ratio of the medians of open + answer).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, type Store } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { preparePausedSession, type TemplateTurn } from './pausedSession.js';

const CHILD = fileURLToPath(new URL('./openInChild.ts', import.meta.url));

/** What one child measured. */
interface ChildSample {
  openMs: number;
  answerMs: number;
  cpuMs: number;
  messagesRead: number;
}

/** The model inputs compared: each bounds what agents are sent, so opening need not read the whole branch. */
const INPUTS = [
  { label: 'historyWindow 100 messages', args: ['--window', '100'] },
  { label: 'WorkingMemory 2,000 tokens', args: ['--budget', '2000'] },
] as const;

/** Rounds per store (each round opens one short and one long session, in alternating order). */
const ROUNDS = { file: 5, mongo: 3 } as const;

function runChild(args: readonly string[]): Promise<ChildSample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', CHILD, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as ChildSample);
      else reject(new Error(`openInChild exited with ${code}: ${err || out}`));
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** A store of one kind for the parent to prepare sessions on, and where the children find it. */
async function parentStore(
  kind: 'file' | 'mongo',
  mongoUrl: () => Promise<string>,
): Promise<{ store: Store; at: string[]; close(): Promise<void> }> {
  if (kind === 'file') {
    const directory = await mkdtemp(join(tmpdir(), 'baton-resume-compare-'));
    const store = new FileStore({ directory });
    return {
      store,
      at: ['--store', 'file', '--at', directory],
      close: async () => {
        await store.close();
        await rm(directory, { recursive: true, force: true });
      },
    };
  }
  const url = await mongoUrl();
  const dbName = `baton_resume_cmp_${Math.random().toString(36).slice(2, 8)}`;
  const store = new MongoStore({ url }, { dbName });
  await store.init();
  return {
    store,
    at: ['--store', 'mongo', '--at', url, '--db', dbName],
    close: async () => {
      await store.db.dropDatabase();
      await store.close();
    },
  };
}

/**
 * Prints the long-vs-short table (see the module comment) for `kinds`.
 * @returns the printed rows, one per store and model input
 */
export async function compareLongAndShort(
  kinds: readonly ('file' | 'mongo')[],
  template: TemplateTurn,
  mongoUrl: () => Promise<string>,
): Promise<string[]> {
  const rows: string[] = [];
  console.log('\nopen + answer of a paused session in a new process, 5,000 turns against 50 turns, alternating:\n');
  console.log(
    '| store | model input | 50 turns: open / answer / total ms | 5,000 turns: open / answer / total ms | CPU ms 50 / 5,000 | messages read 50 / 5,000 | ratio (target ≤ 2) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const kind of kinds) {
    const parent = await parentStore(kind, mongoUrl);
    try {
      for (const input of INPUTS) {
        const samples: Record<50 | 5000, ChildSample[]> = { 50: [], 5000: [] };
        for (let round = 0; round < ROUNDS[kind]; round += 1) {
          const tag = `${input.args[0]!.slice(2)}-${round}`;
          for (const turns of [50, 5000] as const) {
            await preparePausedSession(parent.store, `cmp-${turns}-${tag}`, template, turns);
            await preparePausedSession(parent.store, `warm-${turns}-${tag}`, template, 50);
          }
          const order = round % 2 === 0 ? ([50, 5000] as const) : ([5000, 50] as const);
          for (const turns of order) {
            const ids = ['--warm', `warm-${turns}-${tag}`, '--id', `cmp-${turns}-${tag}`];
            samples[turns].push(await runChild([...parent.at, ...ids, ...input.args]));
          }
        }
        const figures = (list: ChildSample[]) => {
          const total = median(list.map((s) => s.openMs + s.answerMs));
          return {
            text: `${median(list.map((s) => s.openMs)).toFixed(1)} / ${median(list.map((s) => s.answerMs)).toFixed(1)} / ${total.toFixed(1)}`,
            total,
            cpu: median(list.map((s) => s.cpuMs)),
            read: list[0]!.messagesRead,
          };
        };
        const short = figures(samples[50]);
        const long = figures(samples[5000]);
        const row = `| ${kind} | ${input.label} | ${short.text} | ${long.text} | ${short.cpu.toFixed(1)} / ${long.cpu.toFixed(1)} | ${short.read} / ${long.read} | ${(long.total / short.total).toFixed(2)} |`;
        console.log(row);
        rows.push(row);
      }
    } finally {
      await parent.close();
    }
  }
  return rows;
}
