/**
 * Store throughput: appends and reads of a 1,000-message session on InMemoryStore and FileStore.
 * Appends go one message per call (as a chat commits them) and two per call (a tool call and its
 * result); a read returns the whole session. Prints messages per second (median of the runs).
 *
 *   npx vitest bench --run --project @baton/test test/bench/store.bench.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileStore, InMemoryStore, type Store } from '@baton/core';
import { afterAll, bench, describe } from 'vitest';
import { makeMessages, uniqueId } from '../conformance/fixtures.js';

const MESSAGES = 1000;
const figures = new Map<string, number[]>();
const dirs: string[] = [];

function record(name: string, messages: number, ms: number): void {
  const list = figures.get(name) ?? [];
  list.push((messages / ms) * 1000);
  figures.set(name, list);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function appendAll(store: Store, perCall: number): Promise<string> {
  const session = await store.createSession({ id: uniqueId('bench') });
  const messages = makeMessages(1, MESSAGES);
  for (let index = 0; index < messages.length; index += perCall)
    await store.appendMessages(session.id, 'main', messages.slice(index, index + perCall));
  return session.id;
}

const stores: [string, () => Promise<Store>][] = [
  ['InMemoryStore', async () => new InMemoryStore()],
  [
    'FileStore',
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'baton-bench-'));
      dirs.push(directory);
      return new FileStore({ directory });
    },
  ],
];

for (const [kind, create] of stores) {
  describe(kind, async () => {
    const store = await create();
    const readSession = await appendAll(store, 2);

    for (const perCall of [1, 2]) {
      bench(
        `append ${MESSAGES} messages, ${perCall} per call`,
        async () => {
          const start = performance.now();
          await appendAll(store, perCall);
          record(`${kind} append, ${perCall} per call`, MESSAGES, performance.now() - start);
        },
        { iterations: 3, warmupIterations: 0, time: 0, warmupTime: 0 },
      );
    }

    bench(
      `read a ${MESSAGES}-message session`,
      async () => {
        const start = performance.now();
        const read = await store.readMessages(readSession, 'main');
        if (read.length !== MESSAGES) throw new Error(`read ${read.length} messages, expected ${MESSAGES}`);
        record(`${kind} read whole session`, MESSAGES, performance.now() - start);
      },
      { iterations: 30, warmupIterations: 3, time: 0, warmupTime: 0 },
    );
  });
}

afterAll(async () => {
  console.log(`\nstore throughput, ${MESSAGES}-message session (median of runs, messages/s):`);
  for (const [name, values] of figures)
    console.log(
      `  ${name.padEnd(40)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)}  (${values.length} runs)`,
    );
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
