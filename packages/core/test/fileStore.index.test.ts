/**
 * The session log index (`sessions/<id>/log.index.json`): a new FileStore opens a long session from
 * the index and the log lines after it, reads only the byte ranges a call needs, and falls back to
 * replaying the whole log whenever the index does not match it (missing, damaged, older than the
 * log, describing bytes the log lost, or of a log since compacted), so every read equals what the
 * log holds.
 */
import { copyFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DocumentCorruptError, FileStore, type Store } from '../src/index.js';
import { logFileOf } from './support/sessionLogFile.js';
import { makeCheckpoint, makeMessage, makeMessages, makePendingWrite } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('fileindex');
const indexFileOf = (directory: string, id: string) => join(directory, 'sessions', id, 'log.index.json');

/** Everything a store answers about session `id`, for comparing two stores. */
async function everything(store: Store, id: string) {
  const branches = await store.listBranches(id);
  const perBranch = [];
  for (const branch of branches) {
    const manifest = await store.listCheckpoints(id, branch.id);
    perBranch.push({
      branch: await store.getBranch(id, branch.id),
      messages: await store.readMessages(id, branch.id),
      tail: await store.readMessages(id, branch.id, { fromSeq: 40, throughSeq: 70 }),
      manifest,
      checkpoints: await Promise.all(manifest.map((entry) => store.loadCheckpoint(id, branch.id, entry.id))),
      newest: await store.loadCheckpoint(id, branch.id),
    });
  }
  return { session: await store.getSession(id), branches, perBranch };
}

/** Writes turns of `size`-character messages with a checkpoint each through `store`. */
async function writeTurns(store: FileStore, id: string, fromSeq: number, turns: number, size = 2000): Promise<number> {
  let seq = fromSeq;
  for (let t = 0; t < turns; t += 1) {
    const messages = Array.from({ length: 3 }, (_, k) =>
      makeMessage(seq + k, { content: `${seq + k} ${'x'.repeat(size)}` }),
    );
    await store.writeBatch({
      sessionId: id,
      branchId: 'main',
      messages,
      checkpoint: makeCheckpoint(id, { step: seq, throughSeq: seq + 2 }),
    });
    seq += 3;
  }
  return seq;
}

describe('FileStore log index', () => {
  it('opens a long session from its index: a new store reads only the lines it needs, and the same documents', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'long', userId: 'u-1' });
    // The first message's line, then enough turns that the index is written past it.
    await store.appendMessages('long', 'main', [makeMessage(1, { content: 'first' })]);
    await writeTurns(store, 'long', 2, 150);
    await store.idle(); // the index write a write makes due runs after it returns
    expect((await stat(indexFileOf(directory, 'long'))).size).toBeGreaterThan(0);
    expect(await everything(new FileStore({ directory }), 'long')).toEqual(await everything(store, 'long'));

    // Damage the first message's line in place (same length): an open that replayed the whole log would fail.
    const logFile = logFileOf(directory, 'long');
    const text = await readFile(logFile, 'utf8');
    const at = text.indexOf('"content":"first"');
    await writeFile(logFile, `${text.slice(0, at)}"content":{first"${text.slice(at + '"content":"first"'.length)}`);
    const fresh = new FileStore({ directory });
    expect((await fresh.getSession('long'))?.userId).toBe('u-1');
    expect(await fresh.readMessages('long', 'main', { fromSeq: 400 })).toEqual(
      await store.readMessages('long', 'main', { fromSeq: 400 }),
    );
    expect((await fresh.loadCheckpoint('long', 'main'))?.throughSeq).toBe(451);
    const damaged = fresh.readMessages('long', 'main', { fromSeq: 1, throughSeq: 2 });
    await expect(damaged).rejects.toBeInstanceOf(DocumentCorruptError);
    await expect(damaged).rejects.toThrow(/line 4 of .*log\.jsonl is damaged .*restore the file from a backup/); // header, session, branch, then the message

    // Without the index, the whole log is replayed: the same damage fails the open.
    await rm(indexFileOf(directory, 'long'));
    await expect(new FileStore({ directory }).getSession('long')).rejects.toThrow(/line 4 of .*log\.jsonl is damaged/);
  }, 30_000);

  it('replays the whole log when the index is damaged, missing, or of an earlier log; and writes it again', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 's' });
    await writeTurns(store, 's', 1, 30, 100);
    await store.idle();
    const indexFile = indexFileOf(directory, 's');
    const expected = await everything(store, 's');
    const indexText = await readFile(indexFile, 'utf8');
    /** The index with its first run's offset replaced (runs are checked field by field, not by zod). */
    const withRunOffset = (offset: unknown) => {
      const index = JSON.parse(indexText);
      index.branches[0].runs[0][2] = offset;
      return JSON.stringify(index);
    };
    /** The index with its first branch replaced. */
    const withBranch = (change: (branch: { runs: unknown[][] }) => unknown) => {
      const index = JSON.parse(indexText);
      index.branches[0] = change(index.branches[0]);
      return JSON.stringify(index);
    };
    for (const damage of [
      '',
      '{',
      indexText.slice(0, indexText.length / 2), // torn: an index write cut off
      '{"format":"baton-filestore-log-index","version":1}',
      JSON.stringify({ ...JSON.parse(indexText), through: 10 ** 9 }),
      withRunOffset(1.5),
      withRunOffset('12'),
      withRunOffset(null),
      withBranch((branch) => ({ ...branch, runs: { 0: branch.runs[0] } })), // runs not an array
      withBranch((branch) => ({ ...branch, runs: ['1,3', ...branch.runs.slice(1)] })), // a run not an array
      withBranch((branch) => ({ ...branch, runs: [[...(branch.runs[0] ?? []), 0], ...branch.runs.slice(1)] })), // 8 fields
      withBranch((branch) => ({ ...branch, runs: branch.runs.slice(1) })), // a gap before the first run
      withBranch((branch) => ({ ...branch, runs: [branch.runs[0], branch.runs[0], ...branch.runs.slice(1)] })), // a run twice
    ]) {
      await writeFile(indexFile, damage);
      expect(await everything(new FileStore({ directory }), 's')).toEqual(expected);
    }
    await rm(indexFile);
    const reopened = new FileStore({ directory, indexEveryBytes: 1 });
    expect(await everything(reopened, 's')).toEqual(expected);
    await reopened.appendMessages('s', 'main', [makeMessage(91)]);
    await reopened.idle();
    expect(JSON.parse(await readFile(indexFile, 'utf8'))).toMatchObject({
      format: 'baton-filestore-log-index',
      through: (await stat(logFileOf(directory, 's'))).size,
    });
  });

  it('removes the temp file an index write left when its process died before the rename', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 's' });
    await writeTurns(store, 's', 1, 2, 100);
    const folder = join(directory, 'sessions', 's');
    const leftover = join(folder, '.log.index.json.0b0e6c3e-0000-4000-8000-000000000000.tmp');
    await writeFile(leftover, '{"format":"baton-filestore-log-index"');
    const reopened = new FileStore({ directory, indexEveryBytes: 1 });
    await writeTurns(reopened, 's', 7, 1, 100);
    await reopened.idle();
    expect((await readdir(folder)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(await everything(new FileStore({ directory }), 's')).toEqual(await everything(reopened, 's'));
  });

  it('ignores the index of a log since compacted (another log id), and indexes the compacted log', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 's' });
    await writeTurns(store, 's', 1, 5);
    await store.idle();
    const indexFile = indexFileOf(directory, 's');
    const early = await readFile(indexFile, 'utf8');
    const header = async () => (await readFile(logFileOf(directory, 's'), 'utf8')).split('\n')[0];
    const first = await header();
    await writeTurns(store, 's', 16, 200, 100);
    await store.pruneCheckpoints('s', 'main', { last: 1 }); // most of the log is now pruned checkpoints: compacted
    await store.idle();
    expect(await header()).not.toBe(first);
    expect(JSON.parse(await readFile(indexFile, 'utf8')).header).toBe(`${await header()}\n`);
    const expected = await everything(store, 's');
    expect(await everything(new FileStore({ directory }), 's')).toEqual(expected);
    await writeFile(indexFile, early);
    expect(await everything(new FileStore({ directory }), 's')).toEqual(expected);
  }, 30_000);

  it('ignores an index that describes bytes the log no longer holds (a power loss took back the end of the log)', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 's' });
    await writeTurns(store, 's', 1, 5, 100);
    const logFile = logFileOf(directory, 's');
    await copyFile(logFile, `${logFile}.before`);
    await writeTurns(store, 's', 16, 5, 100); // indexed through its end
    await store.idle();
    const indexFile = indexFileOf(directory, 's');
    await copyFile(indexFile, `${indexFile}.after`);
    // The log loses its last writes; different ones (as long) are written after the crash.
    await copyFile(`${logFile}.before`, logFile);
    const other = new FileStore({ directory, indexEveryBytes: 10 ** 9 });
    await writeTurns(other, 's', 16, 5, 101);
    await copyFile(`${indexFile}.after`, indexFile);
    await rm(`${logFile}.before`);
    await rm(`${indexFile}.after`);
    const messages = await new FileStore({ directory }).readMessages('s', 'main');
    expect(messages).toHaveLength(30);
    expect(messages.at(-1)!.content).toBe(`30 ${'x'.repeat(101)}`);
  });

  it('keeps every read equal to what the writer holds, whatever older index a crash left beside the log', async () => {
    // Random writes; after each, the index on disk is saved. Then every saved index is put back
    // beside the final log in turn (as a crash between a log write and an index write leaves it),
    // and a new store must answer exactly what the writer (whose image never came from an index) answers.
    const write = fc.oneof(
      fc.record({
        kind: fc.constant('messages' as const),
        count: fc.integer({ min: 1, max: 150 }),
        branch: fc.constantFrom('main', 'alt'),
      }),
      fc.record({ kind: fc.constant('checkpoint' as const), writes: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant('session' as const) }),
      fc.record({ kind: fc.constant('prune' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 20_000 }),
        async (writes, indexEveryBytes) => {
          const directory = await tempDir();
          const store = new FileStore({ directory, indexEveryBytes });
          await store.createSession({ id: 'p' });
          await store.appendMessages('p', 'main', makeMessages(1, 2));
          await store.forkBranch('p', { branchId: 'alt', parent: { branchId: 'main', atSeq: 1 } });
          const next: Record<string, number> = { main: 3, alt: 2 };
          const indexes = new Set<string>();
          for (const step of writes) {
            if (step.kind === 'messages') {
              await store.appendMessages('p', step.branch, makeMessages(next[step.branch]!, step.count));
              next[step.branch]! += step.count;
            } else if (step.kind === 'checkpoint') {
              const checkpoint = makeCheckpoint('p', { throughSeq: next.main! - 1 });
              await store.saveCheckpoint(checkpoint);
              const pending = Array.from({ length: step.writes }, (_, k) => makePendingWrite(`call-${k}`));
              if (pending.length > 0) await store.putPendingWrites('p', 'main', checkpoint.id, pending);
            } else if (step.kind === 'session') {
              const version = (await store.getSession('p'))!.version;
              await store.updateSession('p', { state: { n: version } }, { expectedVersion: version });
            } else {
              await store.pruneCheckpoints('p', 'main', { last: 2 });
            }
            await store.idle();
            const saved = await readFile(indexFileOf(directory, 'p'), 'utf8').catch(() => undefined);
            if (saved !== undefined) indexes.add(saved);
          }
          const expected = await everything(store, 'p');
          expect(expected.perBranch[0]!.messages.map((m) => m.seq)).toEqual(
            Array.from({ length: next.main! - 1 }, (_, i) => i + 1),
          );
          expect(await everything(new FileStore({ directory }), 'p')).toEqual(expected);
          for (const saved of indexes) {
            await writeFile(indexFileOf(directory, 'p'), saved);
            expect(await everything(new FileStore({ directory }), 'p')).toEqual(expected);
          }
        },
      ),
      { numRuns: 15, seed: 15 },
    );
  }, 60_000);

  it('keeps a CRC-32 of each run of messages: a run whose bytes changed on disk, still valid JSON, throws DocumentCorruptError naming its line', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 'crc' });
    await store.appendMessages('crc', 'main', [makeMessage(1, { content: 'refund order 1234' })]);
    await writeTurns(store, 'crc', 2, 20, 100);
    await store.idle();
    const index = JSON.parse(await readFile(indexFileOf(directory, 'crc'), 'utf8'));
    expect(index.version).toBe(2);
    const [firstRun] = index.branches[0].runs;
    expect(firstRun).toHaveLength(7); // [firstSeq, count, offset, length, line, op | null, crc]
    expect(firstRun[6]).toBeGreaterThanOrEqual(0);

    // One byte flipped in place: '1234' becomes '1235', which a schema would accept.
    const logFile = logFileOf(directory, 'crc');
    const bytes = await readFile(logFile);
    const at = bytes.indexOf('refund order 1234') + 'refund order 123'.length;
    bytes[at] = '5'.charCodeAt(0);
    await writeFile(logFile, bytes);
    const fresh = new FileStore({ directory });
    expect(await fresh.readMessages('crc', 'main', { fromSeq: 2 })).toEqual(
      await store.readMessages('crc', 'main', { fromSeq: 2 }),
    );
    const read = fresh.readMessages('crc', 'main');
    await expect(read).rejects.toBeInstanceOf(DocumentCorruptError);
    await expect(read).rejects.toThrow(
      /line 4 of .*log\.jsonl is damaged \(its bytes no longer match the CRC-32 the log index took of messages 1–1 of branch "main"/,
    );
    // Nothing was rewritten: the byte is as the damage left it.
    expect((await readFile(logFile))[at]).toBe('5'.charCodeAt(0));
  });

  it('still reads a version 1 index (no checksums): its runs are validated in full when read', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 'v1' });
    await writeTurns(store, 'v1', 1, 20, 100);
    await store.idle();
    const expected = await everything(store, 'v1');
    const indexFile = indexFileOf(directory, 'v1');
    const v2 = JSON.parse(await readFile(indexFile, 'utf8'));
    const runsV1 = (runs: (number | null)[][]) =>
      runs.map(([firstSeq, count, offset, length, line, op]) =>
        op === null ? [firstSeq, count, offset, length, line] : [firstSeq, count, offset, length, line, op],
      );
    const v1 = {
      ...v2,
      version: 1,
      branches: v2.branches.map((b: { runs: (number | null)[][] }) => ({ ...b, runs: runsV1(b.runs) })),
    };
    await writeFile(indexFile, JSON.stringify(v1));
    expect(await everything(new FileStore({ directory }), 'v1')).toEqual(expected);

    // The v1 index is used (not a replay of the whole log): a run damaged in place fails only the read that needs it.
    const logFile = logFileOf(directory, 'v1');
    const text = await readFile(logFile, 'utf8');
    const at = text.indexOf('"content":"1 x');
    await writeFile(logFile, `${text.slice(0, at)}"content":{1 x${text.slice(at + '"content":"1 x'.length)}`);
    const fresh = new FileStore({ directory });
    expect(await fresh.getSession('v1')).toEqual(expected.session);
    await expect(fresh.readMessages('v1', 'main')).rejects.toThrow(
      /log\.jsonl is damaged .*restore the file from a backup/,
    );
  });

  it('returns deep-frozen messages, from the writer and from a new store alike, and keeps them whatever a caller tries', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, indexEveryBytes: 1 });
    await store.createSession({ id: 'frozen' });
    const written = makeMessage(1, {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call-1', name: 'lookup_order', arguments: '{}' }],
      metadata: { tags: ['a'] },
    });
    await store.appendMessages('frozen', 'main', [written]);
    await writeTurns(store, 'frozen', 2, 5, 100);
    for (const reader of [store, new FileStore({ directory })]) {
      const [read] = await reader.readMessages('frozen', 'main');
      expect(Object.isFrozen(read)).toBe(true);
      expect(() => {
        read!.content = 'changed';
      }).toThrow(TypeError);
      expect(() => {
        read!.toolCalls![0]!.name = 'other';
      }).toThrow(TypeError);
      expect(() => (read!.metadata!.tags as string[]).push('b')).toThrow(TypeError);
      expect((await reader.readMessages('frozen', 'main'))[0]).toEqual(written);
    }
  });
});
