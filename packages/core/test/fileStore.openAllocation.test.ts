/**
 * Opening a long session in a new process allocates little more than opening a short one (issue 32):
 * FileStore opens it from its log index, whose run table grows with the session (one entry per 64
 * messages), so what reading that table allocates per entry decides what a long session costs a
 * restarted server on top of a short one. It was about 1.1 KB an entry (a cold `for…of` and
 * destructuring allocated an iterator and a result object per field), 0.5 MB at the 480 runs of the
 * resume bench's 5,000 turns: enough to move a young-generation GC into the answer after the open.
 * Counted in bytes allocated (V8's sampling heap profiler, in child processes), never in time.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { MESSAGES_PER_OP } from '../src/store/file/log/logOps.js';
import { makeMessages } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('open-allocation');
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./support/openAllocation.ts', import.meta.url));

/** Bytes a new process allocates opening session `id` (after opening `warmId`), reading from `fromSeq`. */
function allocatedOpening(directory: string, warmId: string, id: string, fromSeq: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, directory, warmId, id, String(fromSeq)], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve((JSON.parse(line) as { bytes: number }).bytes);
      else reject(new Error(`openAllocation.ts exited with ${code}: ${err || out}`));
    });
  });
}

/** Writes a session of `runs` full message runs (the log index keeps one entry per run). */
async function writeSession(store: FileStore, id: string, runs: number): Promise<number> {
  await store.createSession({ id });
  const total = runs * MESSAGES_PER_OP;
  for (let from = 1; from <= total; from += 50 * MESSAGES_PER_OP)
    await store.appendMessages(id, 'main', makeMessages(from, Math.min(50 * MESSAGES_PER_OP, total - from + 1)));
  return total;
}

describe('FileStore: opening a long session in a new process', () => {
  it('allocates at most 600 bytes more per run of its history than opening a short one', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await writeSession(store, 'warm', 2);
    const short = await writeSession(store, 'short', 10);
    const long = await writeSession(store, 'long', 500);
    await store.close();

    // The newest 20 messages, as a bounded model input needs (the same number of bytes read from each).
    const shortBytes = await allocatedOpening(directory, 'warm', 'short', short - 19);
    const longBytes = await allocatedOpening(directory, 'warm', 'long', long - 19);
    const perRun = (longBytes - shortBytes) / (500 - 10);
    // On 2d600e0: 1,105–1,144 bytes a run (about 550 KB more at 500 runs); now the index's JSON and one
    // run object with its location: 332–347.
    expect(perRun).toBeLessThan(600);
  }, 60_000);
});
