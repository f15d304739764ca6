import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { spawnWriter, waitForOutput } from './support/spawnWriter.js';
import { makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-crash');
const PAYLOAD = 400_000;

const committedSeqs = (lines: string[]) =>
  lines.filter((l) => l.startsWith('committed ')).map((l) => Number(l.split(' ')[1]));

/** Resolves when `file`'s last byte is not a newline, i.e. an append is being written right now (or after 5 s). */
async function waitForWriteInProgress(file: string): Promise<void> {
  const handle = await open(file, 'r');
  const last = Buffer.alloc(1);
  const deadline = Date.now() + 5000;
  try {
    while (Date.now() < deadline) {
      const { size } = await handle.stat();
      if (size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a) return;
    }
  } finally {
    await handle.close();
  }
}

describe('FileStore after a writer process is killed with SIGKILL mid-appends', () => {
  it('loads the session, reads only whole messages, keeps every committed one, and continues the seq', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, lockStaleMs: 2000 });
    await store.createSession({ id: 'crash-1' });
    const file = join(directory, 'sessions/crash-1/log.jsonl');

    // Kill the writer while an append is being written, until one kill has left a torn line (at most 4 rounds).
    let tornRounds = 0;
    for (let round = 0; round < 4 && tornRounds === 0; round += 1) {
      const before = (await store.readMessages('crash-1', 'main')).length;
      // Batches of 8 messages of 400 kB: each append is one 3.2 MB write, so a kill can land inside it.
      const writer = spawnWriter(['loop', directory, 'crash-1', '1000000', String(PAYLOAD)]);
      await waitForOutput(writer, (lines) => committedSeqs(lines).length >= 2);
      await waitForWriteInProgress(file);
      writer.child.kill('SIGKILL');
      const exit = await writer.exited;
      expect(exit.signal).toBe('SIGKILL');
      const committed = Math.max(...committedSeqs(writer.lines));

      // The raw log: every complete line is a whole batch; anything after the last newline is a torn line.
      const raw = await readFile(file, 'utf8');
      const complete = raw.slice(0, raw.lastIndexOf('\n') + 1);
      const lines = complete.split('\n').slice(1, -1); // after the header
      if (raw.length > complete.length) tornRounds += 1;
      const ops = lines.flatMap((line) => (JSON.parse(line) as { ops: { op: string; messages?: unknown[] }[] }).ops);
      const stored = ops.reduce((n, op) => n + (op.op === 'messages' ? op.messages!.length : 0), 0);

      const reopened = new FileStore({ directory, lockStaleMs: 2000 });
      expect(await reopened.getSession('crash-1')).toMatchObject({ id: 'crash-1', status: 'active' });
      const messages = await reopened.readMessages('crash-1', 'main');
      expect(messages.length).toBe(stored);
      expect(messages.length).toBeGreaterThanOrEqual(committed);
      expect(messages.length).toBeGreaterThan(before);
      expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: messages.length }, (_, i) => i + 1));
      for (const message of messages.slice(before)) {
        expect(message.content).toBe(`${writer.child.pid} #${message.seq} ${'x'.repeat(PAYLOAD)}`);
      }

      // The next append (which may wait for the dead writer's lock to go stale) continues the seq and cuts any torn line off.
      const next = makeMessage(messages.length + 1);
      expect(await reopened.appendMessages('crash-1', 'main', [next])).toEqual({ inserted: 1 });
      const after = await reopened.readMessages('crash-1', 'main');
      expect(after.map((m) => m.id)).toEqual([...messages.map((m) => m.id), next.id]);
      expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(true);
      await reopened.close();
    }
    expect(tornRounds, 'no kill landed inside a write, so no torn line was tested').toBe(1);
    // Up to 4 rounds, each a writer's tsx start-up and 3.2 MB writes, then an append that may wait out the dead
    // writer's lock (lockStaleMs 2 s): 3-15 s on an idle machine, four times that and more under load.
  }, 180_000);
});

describe('FileStore with two processes appending to one session', () => {
  it('stores every message once, with consecutive seqs; conflicts come back as ConcurrencyError and are retried', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'shared-1' });
    const writers = [
      spawnWriter(['contend', directory, 'shared-1', '25', '16']),
      spawnWriter(['contend', directory, 'shared-1', '25', '16']),
    ];
    const exits = await Promise.all(writers.map((w) => w.exited));
    for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0 });

    const messages = await store.readMessages('shared-1', 'main');
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(messages.map((m) => m.id)).size).toBe(50);
    const reported = writers.flatMap((w) =>
      w.lines.filter((l) => l.startsWith('committed ')).map((l) => l.split(' ')[2]),
    );
    expect(reported.sort()).toEqual(messages.map((m) => m.id).sort());
    for (const writer of writers) expect(writer.lines.at(-1)).toMatch(/^conflicts \d+$/);
  }, 60_000);
});
