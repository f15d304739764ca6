/**
 * Orchestration overhead of @baton/handoff per turn, checkpoint size and stored bytes, at 10, 100 and
 * 1,000 turns of history, on InMemoryStore and FileStore. Each turn is the classic handoff turn:
 * the coordinator hands off, the specialist answers (two instant ScriptedModel calls, one handoff),
 * so the time measured is Baton's own. Wall time and this process's CPU time are both printed (CPU
 * time is the steadier figure on a shared machine). Checkpoint size is the serialised newest
 * checkpoint; stored/messages is every byte the store holds for the session divided by the bytes of
 * its messages' own JSON. The disk's floor (one fdatasync'd 500-byte append, the cost of one FileStore
 * durability point before any work) is measured in the same run and printed with them, since it
 * moves with what else the machine is doing. Run: npx vitest bench --run --project @baton/test test/bench/handoff.bench.ts
 */
import { mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, InMemoryStore, type Message, type Store } from '@baton/core';
import type { HandoffSession } from '@baton/handoff';
import { bench, describe } from 'vitest';
import { handoffDesk } from './handoffDesk.js';

const HISTORY = [10, 100, 1000] as const;
/** Per store and history length: sessions built to that length, and turns then measured on each (averaged). */
const PLAN: Record<'memory' | 'file', Record<(typeof HISTORY)[number], { sessions: number; measured: number }>> = {
  memory: {
    10: { sessions: 200, measured: 2 },
    100: { sessions: 10, measured: 10 },
    1000: { sessions: 3, measured: 30 },
  },
  file: { 10: { sessions: 10, measured: 2 }, 100: { sessions: 3, measured: 5 }, 1000: { sessions: 1, measured: 20 } },
};

async function turn(session: HandoffSession, text: string): Promise<void> {
  for await (const _ of session.send(text)) {
    // drain
  }
}

/**
 * The disk's floor for one durability point, measured in the same run: the median time of one
 * fdatasync'd 500-byte append (a FileStore turn is one such append, plus the work around it).
 */
async function fsyncFloorUs(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-bench-fsync-'));
  const handle = await open(join(dir, 'floor'), 'a');
  const line = Buffer.alloc(500, 0x61);
  const times: number[] = [];
  try {
    for (let i = 0; i < 200; i += 1) {
      const started = performance.now();
      await handle.write(line);
      await handle.datasync();
      times.push((performance.now() - started) * 1000);
    }
  } finally {
    await handle.close();
    await rm(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

async function memoryBytes(store: Store, sessionId: string): Promise<number> {
  const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
  let total = size(await store.getSession(sessionId)) + size(await store.listBranches(sessionId));
  total += (await store.readMessages(sessionId, 'main')).reduce((n, m) => n + size(m), 0);
  for (const entry of await store.listCheckpoints(sessionId, 'main'))
    total += size(await store.loadCheckpoint(sessionId, 'main', entry.id));
  return total;
}

interface Row {
  store: string;
  history: number;
  usPerTurn: number;
  cpuUsPerTurn: number;
  checkpointBytes: number;
  storedRatio: number;
}

async function measure(kind: 'memory' | 'file', history: (typeof HISTORY)[number]): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-bench-'));
  const store: Store = kind === 'memory' ? new InMemoryStore() : new FileStore({ directory: dir });
  const workflow = handoffDesk(store);
  const { sessions, measured } = PLAN[kind][history];
  let elapsed = 0;
  let cpuMicros = 0;
  let checkpointBytes = 0;
  let storedRatio = 0;
  // Build every session to `history` turns first, then measure, so building does not leak into the figures.
  const opened: HandoffSession[] = [];
  for (let s = 0; s < sessions; s += 1) {
    const session = await workflow.session({ id: `bench-${history}-${s}` });
    for (let t = 1; t <= history; t += 1)
      await turn(session, `Question ${t}: I was charged twice for order ${1000 + t}.`);
    opened.push(session);
  }
  for (const session of opened) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    for (let t = 1; t <= measured; t += 1) await turn(session, `Follow-up ${t}: and the refund?`);
    const cpu = process.cpuUsage(cpuStarted);
    elapsed += performance.now() - started;
    cpuMicros += cpu.user + cpu.system;
  }
  const id = opened[0]!.id;
  checkpointBytes = Buffer.byteLength(JSON.stringify(await store.loadCheckpoint(id, 'main')));
  const messages: Message[] = await store.readMessages(id, 'main');
  const own = messages.reduce((n, m) => n + Buffer.byteLength(JSON.stringify(m)), 0);
  const held = kind === 'memory' ? await memoryBytes(store, id) : await folderBytes(join(dir, 'sessions', id));
  storedRatio = held / own;
  await store.close();
  await rm(dir, { recursive: true, force: true });
  return {
    store: kind === 'memory' ? 'InMemoryStore' : 'FileStore',
    history,
    usPerTurn: (elapsed * 1000) / (sessions * measured),
    cpuUsPerTurn: cpuMicros / (sessions * measured),
    checkpointBytes,
    storedRatio,
  };
}

describe('handoff orchestration', () => {
  bench(
    'figures at 10 / 100 / 1,000 turns of history',
    async () => {
      // JIT warm-up on throwaway sessions, short and long (without it the first figures measure the compiler).
      // On three workflows: every row below builds a new one, and code the JIT specialised for one
      // workflow's closures (the agents' models, the routing machine's guards) is deoptimised and
      // recompiled when the next one runs; warmed on a single workflow, the first row measured that.
      const warmDesk = handoffDesk(new InMemoryStore());
      for (let d = 0; d < 3; d += 1) {
        const shortDesk = handoffDesk(new InMemoryStore());
        for (let s = 0; s < 30; s += 1) {
          const short = await shortDesk.session({ id: `warm-${d}-${s}` });
          for (let t = 0; t < 12; t += 1) await turn(short, `warm ${t}`);
        }
      }
      const warm = await warmDesk.session({ id: 'warm-long' });
      for (let t = 0; t < 1500; t += 1) await turn(warm, `warm ${t}`);
      const rows: Row[] = [];
      const floorBefore = await fsyncFloorUs();
      for (const kind of ['memory', 'file'] as const) {
        for (const history of HISTORY) {
          // The median of several rounds for the fast store (a shared machine has noisy neighbours).
          const rounds: Row[] = [];
          for (let r = 0; r < (kind === 'memory' ? 3 : 1); r += 1) rounds.push(await measure(kind, history));
          rounds.sort((a, b) => a.usPerTurn - b.usPerTurn);
          rows.push(rounds[Math.floor(rounds.length / 2)]!);
        }
      }
      const floor = (floorBefore + (await fsyncFloorUs())) / 2;
      const cpu = process.cpuUsage();
      console.log(
        `\none fdatasync'd 500-byte append on this disk now (median, before and after the rows): ${floor.toFixed(0)} µs`,
      );
      console.log(
        `(load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores; process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)`,
      );
      console.log('store          history  wall µs/turn  CPU µs/turn  checkpoint B  stored/messages');
      for (const r of rows) {
        console.log(
          `${r.store.padEnd(14)} ${String(r.history).padStart(7)}  ${r.usPerTurn.toFixed(0).padStart(12)}  ${r.cpuUsPerTurn.toFixed(0).padStart(11)}  ${String(r.checkpointBytes).padStart(12)}  ${r.storedRatio.toFixed(3).padStart(15)}`,
        );
      }
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );
});
