/**
 * A complete line damaged in the middle of a session log (a disk fault, a hand edit; not the torn
 * last line a crash leaves, which is ignored): every call that needs the line fails with a
 * DocumentCorruptError naming the file, the line and what to do; the log is never rewritten over
 * it (a write is refused, or, when the index lets the session open past the line, appended after
 * it with compaction put off); and no other session is affected.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DocumentCorruptError, FileStore } from '../src/index.js';
import { logFileOf } from './support/sessionLogFile.js';
import { makeCheckpoint, makeMessage, makeMessages } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filedamage');
const ADVICE =
  /line 4 of .*sessions\/damaged\/log\.jsonl is damaged \(.*\);.* salvage the records before it with FileStore\.repair .*, or restore the file from a backup\. Nothing in it was changed, and no other session is affected/;

/** Replaces line `number` (1 = the header) of a log with `text`, keeping the rest byte for byte. */
async function damageLine(file: string, number: number, text: string): Promise<string> {
  const original = await readFile(file, 'utf8');
  const lines = original.split('\n');
  lines[number - 1] = text;
  await writeFile(file, lines.join('\n'));
  return original;
}

describe('FileStore: a damaged line in the middle of a session log', () => {
  it('names the file, line and fix on every call that needs it, refuses writes without touching the file, and leaves other sessions whole', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    for (const id of ['damaged', 'healthy']) {
      await store.createSession({ id, userId: 'u-1' });
      await store.appendMessages(id, 'main', makeMessages(1, 3));
      await store.appendMessages(id, 'main', makeMessages(4, 2));
      await store.saveCheckpoint(makeCheckpoint(id, { throughSeq: 5 }));
    }
    const file = logFileOf(directory, 'damaged');
    const original = await damageLine(file, 4, '{"ops":[{"op":"messages","branchId":"main","messages":[{"id":');
    const damaged = await readFile(file, 'utf8');

    const reader = new FileStore({ directory });
    for (const call of [
      () => reader.getSession('damaged'),
      () => reader.readMessages('damaged', 'main'),
      () => reader.loadCheckpoint('damaged', 'main'),
      () => reader.appendMessages('damaged', 'main', [makeMessage(6)]),
      () => reader.updateSession('damaged', { state: { a: 1 } }, { expectedVersion: 1 }),
    ]) {
      const failure = call();
      await expect(failure).rejects.toBeInstanceOf(DocumentCorruptError);
      await expect(failure).rejects.toThrow(ADVICE);
    }
    expect(await readFile(file, 'utf8')).toBe(damaged); // nothing written over it

    // The other session reads, writes, lists and is swept as before.
    expect((await reader.readMessages('healthy', 'main')).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await reader.appendMessages('healthy', 'main', [makeMessage(6)])).toEqual({ inserted: 1 });
    expect((await reader.listSessions()).map((s) => s.id)).toEqual(['healthy']);
    expect(await reader.deleteInactiveSessions({ idleFor: 0, dryRun: true })).toEqual(['healthy']);
    expect(await reader.deleteCheckpointsOlderThan(new Date(Date.now() + 60_000).toISOString())).toBe(0);

    // Erasing the user erases what can be read, then says which session may still hold their data.
    const erase = reader.eraseUser({ userId: 'u-1' });
    await expect(erase).rejects.toBeInstanceOf(DocumentCorruptError);
    await expect(erase).rejects.toThrow(
      /eraseUser erased 1 sessions .* 1 stored session\(s\) cannot be read .*line 4 of .*damaged\/log\.jsonl.* Restore or delete them, then call eraseUser again/,
    );
    expect(await reader.getSession('healthy')).toBeUndefined();
    expect(await readFile(file, 'utf8')).toBe(damaged);

    // Restored from a backup, the session reads back whole.
    await writeFile(file, original);
    const restored = new FileStore({ directory });
    expect((await restored.readMessages('damaged', 'main')).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await restored.loadCheckpoint('damaged', 'main'))?.throughSeq).toBe(5);
  });

  it('keeps appending after a damaged line the index lets the session open past, and never compacts over it', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 'damaged' });
    await store.appendMessages('damaged', 'main', makeMessages(1, 3));
    const big = (seq: number) => makeMessage(seq, { content: `${seq} ${'y'.repeat(20_000)}` });
    for (let seq = 4; seq <= 20; seq += 1) await store.appendMessages('damaged', 'main', [big(seq)]);
    const file = logFileOf(directory, 'damaged');
    const text = await readFile(file, 'utf8');
    // Line 4 (seqs 1–3) damaged in place, same length: the index covers it, so the session opens.
    await damageLine(file, 4, text.split('\n')[3]!.replace('"messages":[', '"messages":{'));
    const writer = new FileStore({ directory, indexEveryBytes: 1 });
    expect((await writer.readMessages('damaged', 'main', { fromSeq: 4 })).map((m) => m.seq)).toEqual(
      Array.from({ length: 17 }, (_, i) => i + 4),
    );
    // Appending past 1 MiB would compact the log; it cannot read line 4, so the log stays as it is.
    for (let seq = 21; seq <= 80; seq += 1)
      expect(await writer.appendMessages('damaged', 'main', [big(seq)])).toEqual({ inserted: 1 });
    const after = await readFile(file, 'utf8');
    expect(after.split('\n')[0]).toBe(text.split('\n')[0]); // the same log: not rewritten
    expect(after.split('\n')[3]).toContain('"messages":{');
    const reader = new FileStore({ directory });
    expect((await reader.readMessages('damaged', 'main', { fromSeq: 79 })).map((m) => m.seq)).toEqual([79, 80]);
    await expect(reader.readMessages('damaged', 'main')).rejects.toThrow(
      /line 4 of .*log\.jsonl is damaged .*restore the file from a backup/,
    );
  }, 30_000);
});
