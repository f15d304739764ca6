/**
 * CPU per FileStore write, in the shape of the support desk's replay with `'step'` checkpoints:
 * conversations of 9 rounds, each round one `writeBatch` (two messages of about 240 bytes, a
 * session change and a checkpoint of about 1 KB) and four `saveCheckpoint`s (45 writes and 45
 * checkpoints per session, as in the ABCD replay), `--lanes` conversations at a time, `--conversations`
 * one after another per lane, after a warm-up of 5 per lane. Every write is a durability point (one
 * fdatasync'd log line under the session's lock). Prints, per write: the main thread's user and
 * system CPU (from `/proc/self/task/<pid>/stat`, 10 ms ticks; Linux only, else left out), the
 * process's CPU (all threads: the thread pool's fdatasync, rmdir and mkdir, V8's helpers) and wall
 * time, with the load average.
 *
 * `--core <checkout>` measures the FileStore of another checkout of this repository (its
 * `packages/core/src`), so two commits can be compared by alternating runs in one sitting.
 *
 * Run: node --conditions=source --import tsx test/bench/fileStoreWrites.ts [--lanes 4] [--conversations 30] [--core <checkout>]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Checkpoint, FileStore as FileStoreClass, Message } from '@baton/core';
import * as thisCore from '@baton/core';

const { values } = parseArgs({
  options: {
    lanes: { type: 'string', default: '4' },
    conversations: { type: 'string', default: '30' },
    core: { type: 'string' },
  },
});
const lanes = Number(values.lanes);
const conversations = Number(values.conversations);
const core = (
  values.core === undefined ? thisCore : await import(resolve(values.core, 'packages/core/src/index.ts'))
) as typeof thisCore;
const ROUNDS = 9;
const CHECKPOINTS_PER_ROUND = 4;
const PAD = 'x'.repeat(900);

/** The main thread's user and system CPU in µs, or `undefined` without `/proc`. */
function mainThreadCpu(): { user: number; system: number } | undefined {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
  } catch {
    return undefined;
  }
}

function checkpoint(sessionId: string, step: number, parentId: string | null): Checkpoint {
  return {
    schemaVersion: core.CHECKPOINT_SCHEMA_VERSION,
    id: core.createId(),
    parentId,
    sessionId,
    branchId: 'main',
    step,
    createdAt: new Date().toISOString(),
    throughSeq: step,
    machine: {
      status: 'active',
      value: 'running',
      context: { activeAgent: 'billing', turn: step, handoffsThisTurn: 1 },
    },
    pendingRequests: [],
    pendingWrites: [],
    statePatches: { session: [{ op: 'replace', path: ['notes'], value: `${PAD}${step}` }], branch: [] },
  };
}

/** One conversation; returns the writes it made. */
async function conversation(store: FileStoreClass, lane: number): Promise<number> {
  const session = await store.createSession({ id: `lane-${lane}-${core.createId()}` });
  let seq = 0;
  let parent: string | null = null;
  let version = session.version;
  let writes = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const messages: Message[] = [0, 1].map(() => {
      seq += 1;
      return {
        id: core.createId(),
        seq,
        role: seq % 2 === 1 ? 'user' : 'assistant',
        content: `message ${seq} ${PAD.slice(0, 200)}`,
        createdAt: new Date().toISOString(),
      };
    });
    const first = checkpoint(session.id, seq, parent);
    parent = first.id;
    const result = await store.writeBatch({
      sessionId: session.id,
      branchId: 'main',
      messages,
      checkpoint: first,
      session: { change: { lastActivityAt: new Date().toISOString() }, expectedVersion: version },
    });
    version = result.session!.version;
    writes += 1;
    for (let k = 0; k < CHECKPOINTS_PER_ROUND; k += 1) {
      const next = checkpoint(session.id, seq, parent);
      parent = next.id;
      await store.saveCheckpoint(next);
      writes += 1;
    }
  }
  return writes;
}

async function run(store: FileStoreClass, perLane: number): Promise<number> {
  const counts = await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      let writes = 0;
      for (let c = 0; c < perLane; c += 1) writes += await conversation(store, lane);
      return writes;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

const directory = await mkdtemp(join(tmpdir(), 'baton-bench-writes-'));
try {
  const store = new core.FileStore({ directory });
  await run(store, 5);
  const main0 = mainThreadCpu();
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const writes = await run(store, conversations);
  const wallUs = (performance.now() - started) * 1000;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpu();
  const per = (us: number) => (us / writes).toFixed(0);
  const mainPart =
    main0 && main1
      ? `main thread user ${per(main1.user - main0.user)}, system ${per(main1.system - main0.system)}; `
      : '';
  console.log(
    `${values.core ?? 'this checkout'}: ${writes} writes on ${lanes} lanes; µs per write: ${mainPart}process CPU ${per(cpu.user + cpu.system)}; wall ${per(wallUs)} (load average ${loadavg()[0]!.toFixed(1)})`,
  );
} finally {
  await rm(directory, { recursive: true, force: true });
}
