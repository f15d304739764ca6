/**
 * What opening a long FileStore session costs a new process: a session of N turns (6 messages each,
 * as the support desk stores them: customer, handoff call and result, a tool call and result,
 * answer), then a new `FileStore` object on the folder (nothing in memory) runs what resuming a
 * paused turn reads — `getSession`, `getBranch`, `loadCheckpoint` (the newest) and `readMessages`
 * of the last 100 messages — and, separately, `readMessages` of the whole history. The same open is
 * timed with the log index removed (the whole log replayed, as before the index existed). Two ways
 * to write the history: one `writeBatch` per turn (messages, session change and checkpoint: how the
 * runtime writes) and `appendMessages` in slices of 2,000 (how `bench:resume` builds its sessions).
 * Prints medians over 7 fresh store objects (and the mean CPU time of an indexed open: steadier on a
 * shared machine), log bytes per message, and index size.
 *
 *   npx tsx --conditions=source packages/core/test/bench/fileStoreOpen.ts [--turns 5000]
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FileStore, type Message } from '../../src/index.js';
import { makeCheckpoint } from '../support/storeFixtures.js';

const SAMPLES = 7;

/** One turn's messages from `seq`, about the size the support desk stores (tool calls, metadata). */
function turn(seq: number, t: number): Message[] {
  const at = (k: number) => new Date(Date.UTC(2026, 0, 1) + (seq + k) * 1000).toISOString();
  const id = (k: number) => `019a8f4e-${String(t).padStart(4, '0')}-7000-8000-${String(seq + k).padStart(12, '0')}`;
  return [
    {
      id: id(0),
      seq,
      role: 'user',
      content: `I was charged twice for order ${1000 + t}, can you refund the second charge? It was on my card ending 4242.`,
      createdAt: at(0),
    },
    {
      id: id(1),
      seq: seq + 1,
      role: 'assistant',
      agent: 'triage',
      content: '',
      toolCalls: [
        {
          id: `call-h-${t}`,
          name: 'handoff_to_billing',
          arguments: JSON.stringify({ reason: 'The customer asks for a refund of a duplicate charge.' }),
        },
      ],
      createdAt: at(1),
    },
    {
      id: id(2),
      seq: seq + 2,
      role: 'tool',
      agent: 'triage',
      content: 'Transferred to billing.',
      toolCallId: `call-h-${t}`,
      toolName: 'handoff_to_billing',
      isError: false,
      durationMs: 0.4,
      metadata: { control: { kind: 'handoff', target: 'billing' } },
      createdAt: at(2),
    },
    {
      id: id(3),
      seq: seq + 3,
      role: 'assistant',
      agent: 'billing',
      content: '',
      toolCalls: [
        {
          id: `call-r-${t}`,
          name: 'refund',
          arguments: JSON.stringify({ orderId: String(1000 + t), amountCents: 4599 }),
        },
      ],
      createdAt: at(3),
    },
    {
      id: id(4),
      seq: seq + 4,
      role: 'tool',
      agent: 'billing',
      content: JSON.stringify({ refunded: true, orderId: String(1000 + t), amountCents: 4599, reference: `R-${t}` }),
      toolCallId: `call-r-${t}`,
      toolName: 'refund',
      isError: false,
      durationMs: 12.5,
      metadata: { approvedBy: 'operator-7' },
      createdAt: at(4),
    },
    {
      id: id(5),
      seq: seq + 5,
      role: 'assistant',
      agent: 'billing',
      content: `I refunded the duplicate charge of $45.99 on order ${1000 + t}; reference R-${t}. Anything else?`,
      createdAt: at(5),
    },
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/** Opens the session from a new store object as resuming a paused turn does. */
async function open(directory: string, id: string, total: number): Promise<number> {
  const store = new FileStore({ directory });
  const { ms, value } = await timed(async () => {
    const session = await store.getSession(id);
    const branch = await store.getBranch(id, 'main');
    const checkpoint = await store.loadCheckpoint(id, 'main');
    const tail = await store.readMessages(id, 'main', { fromSeq: total - 99 });
    return session !== undefined && branch !== undefined && checkpoint !== undefined && tail.length === 100;
  });
  await store.close();
  if (!value) throw new Error('the open read less than it should');
  return ms;
}

async function readAll(directory: string, id: string, total: number): Promise<number> {
  const store = new FileStore({ directory });
  const { ms, value } = await timed(() => store.readMessages(id, 'main'));
  await store.close();
  if (value.length !== total) throw new Error(`read ${value.length} of ${total} messages`);
  return ms;
}

async function build(directory: string, id: string, turns: number, way: 'writeBatch' | 'slices'): Promise<number> {
  const store = new FileStore({ directory });
  await store.createSession({ id, userId: 'u-1' });
  const history = Array.from({ length: turns }, (_, t) => turn(t * 6 + 1, t)).flat();
  if (way === 'slices') {
    for (let from = 0; from < history.length; from += 2000)
      await store.appendMessages(id, 'main', history.slice(from, from + 2000));
    await store.saveCheckpoint(makeCheckpoint(id, { throughSeq: history.length }));
  } else {
    let version = 1;
    for (let t = 0; t < turns; t += 1) {
      const messages = history.slice(t * 6, t * 6 + 6);
      const result = await store.writeBatch({
        sessionId: id,
        branchId: 'main',
        messages,
        session: { change: { lastActivityAt: messages.at(-1)!.createdAt }, expectedVersion: version },
        checkpoint: makeCheckpoint(id, {
          step: t + 1,
          throughSeq: messages.at(-1)!.seq,
          machine: { value: 'idle', context: { activeAgent: 'billing', turn: t + 1 } },
        }),
      });
      version = result.session!.version;
      if (t % 10 === 9) await store.pruneCheckpoints(id, 'main', { last: 5 });
    }
  }
  await store.close();
  return history.length;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { turns: { type: 'string', default: '5000' } } });
  const turns = Number(values.turns);
  console.log(
    `cores: ${availableParallelism()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}`,
  );
  console.log(
    `FileStore, a session of ${turns.toLocaleString('en-US')} turns; medians of ${SAMPLES} new store objects\n`,
  );
  console.log(
    '| history written by | messages | log bytes per message | index KiB | open ms (indexed) | open CPU ms | open ms (index removed) | full readMessages ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const way of ['writeBatch', 'slices'] as const) {
    const directory = await mkdtemp(join(tmpdir(), 'baton-fileopen-bench-'));
    try {
      const id = `bench-${way}`;
      const total = await build(directory, id, turns, way);
      const logFile = join(directory, 'sessions', id, 'log.jsonl');
      const indexFile = join(directory, 'sessions', id, 'log.index.json');
      const logBytes = (await stat(logFile)).size;
      const indexBytes = (await stat(indexFile)).size;
      await open(directory, id, total); // warm-up
      const indexed: number[] = [];
      const cpu = process.cpuUsage();
      for (let k = 0; k < SAMPLES; k += 1) indexed.push(await open(directory, id, total));
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000 / SAMPLES;
      const full: number[] = [];
      for (let k = 0; k < 3; k += 1) full.push(await readAll(directory, id, total));
      await rm(indexFile);
      const unindexed: number[] = [];
      for (let k = 0; k < 3; k += 1) unindexed.push(await open(directory, id, total));
      console.log(
        `| ${way === 'writeBatch' ? 'one writeBatch per turn' : 'appendMessages, 2,000 per call'} | ${total.toLocaleString('en-US')} | ${Math.round(logBytes / total)} | ${(indexBytes / 1024).toFixed(0)} | ${median(indexed).toFixed(2)} | ${cpuMs.toFixed(2)} | ${median(unindexed).toFixed(1)} | ${median(full).toFixed(1)} |`,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
}

await main();
