import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConcurrencyError, FileStore, type Session } from '../src/index.js';
import { logFileOf } from './support/sessionLogFile.js';
import { makeMessage, makeMessages } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-concurrency');

describe('FileStore with two instances on one folder', () => {
  it('lets exactly one of two racing appends of a seq win, and never stores a duplicate', async () => {
    const directory = await tempDir();
    const a = new FileStore({ directory });
    const b = new FileStore({ directory });
    await a.createSession({ id: 'race-1' });
    for (let seq = 1; seq <= 15; seq += 1) {
      const results = await Promise.allSettled([
        a.appendMessages('race-1', 'main', [makeMessage(seq)]),
        b.appendMessages('race-1', 'main', [makeMessage(seq)]),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const [lost] = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(lost?.reason).toBeInstanceOf(ConcurrencyError);
    }
    const messages = await b.readMessages('race-1', 'main');
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(new Set(messages.map((m) => m.id)).size).toBe(15);
  });

  it('makes retried batches from both instances idempotent', async () => {
    const directory = await tempDir();
    const a = new FileStore({ directory });
    const b = new FileStore({ directory });
    await a.createSession({ id: 'retry-1' });
    const batch = makeMessages(1, 5);
    const results = await Promise.all([
      a.appendMessages('retry-1', 'main', batch),
      b.appendMessages('retry-1', 'main', batch),
      a.appendMessages('retry-1', 'main', batch),
    ]);
    expect(results.map((r) => r.inserted).sort()).toEqual([0, 0, 5]);
    expect(await b.readMessages('retry-1', 'main')).toEqual(batch);
  });

  it('compare-and-sets session updates across instances', async () => {
    const directory = await tempDir();
    const a = new FileStore({ directory });
    const b = new FileStore({ directory });
    await a.createSession({ id: 'cas-1' });
    for (let version = 1; version <= 8; version += 1) {
      const results = await Promise.allSettled([
        a.updateSession('cas-1', { state: { writer: 'a', version } }, { expectedVersion: version }),
        b.updateSession('cas-1', { state: { writer: 'b', version } }, { expectedVersion: version }),
      ]);
      const won = results.filter((r): r is PromiseFulfilledResult<Session> => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: expect.any(ConcurrencyError) });
      expect(await b.getSession('cas-1')).toEqual(won[0]?.value);
    }
    expect((await a.getSession('cas-1'))?.version).toBe(9);
  });
});

describe('FileStore with a log replaced in place under it', () => {
  it('reads a log rewritten in place (same inode and header, a backup copied over it) again from the start, never at its old offsets', async () => {
    const directory = await tempDir();
    const a = new FileStore({ directory });
    const b = new FileStore({ directory });
    await a.createSession({ id: 'in-place' });
    const first = makeMessages(1, 3);
    await a.appendMessages('in-place', 'main', first);
    const file = logFileOf(directory, 'in-place');
    const backup = await readFile(file);
    await a.appendMessages('in-place', 'main', makeMessages(4, 5));
    expect((await b.readMessages('in-place', 'main')).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const { ino } = await stat(file);

    // The backup copied over the log (same file), then another store writes other messages after it.
    await writeFile(file, backup);
    const again = makeMessages(4, 10).map((m) => ({ ...m, content: `written again ${m.seq}` }));
    await new FileStore({ directory }).appendMessages('in-place', 'main', again);
    expect((await stat(file)).ino).toBe(ino);

    for (const store of [b, a]) expect(await store.readMessages('in-place', 'main')).toEqual([...first, ...again]);
    expect(await a.appendMessages('in-place', 'main', [makeMessage(14)])).toEqual({ inserted: 1 });
    expect((await b.readMessages('in-place', 'main', { fromSeq: 13 })).map((m) => m.seq)).toEqual([13, 14]);
  });
});

describe('FileStore session locks (folder locks, which a crashed process leaves behind)', () => {
  it('breaks a lock left by a crashed process once it is stale', async () => {
    const directory = await tempDir();
    const creator = new FileStore({ directory, lock: 'folder' });
    await creator.createSession({ id: 'stale-1' });
    // A write returns once it is durable; its lock folder is removed just after. close() waits for that.
    await creator.close();
    const store = new FileStore({ directory, lock: 'folder', lockStaleMs: 2000 });
    const lock = join(directory, 'locks', 'stale-1.lock');
    await mkdir(lock);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lock, longAgo, longAgo);
    expect(await store.appendMessages('stale-1', 'main', [makeMessage(1)])).toEqual({ inserted: 1 });
  });

  it('gives up with a ConcurrencyError when another writer holds the lock for longer than lockWaitMs', async () => {
    const directory = await tempDir();
    const creator = new FileStore({ directory, lock: 'folder' });
    await creator.createSession({ id: 'held-1' });
    await creator.close();
    const store = new FileStore({ directory, lock: 'folder', lockStaleMs: 60_000, lockWaitMs: 300 });
    await mkdir(join(directory, 'locks', 'held-1.lock'));
    const failure = store.appendMessages('held-1', 'main', [makeMessage(1)]);
    await expect(failure).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(failure).rejects.toThrow(/being written by another writer/);
    expect(await store.readMessages('held-1', 'main')).toEqual([]);
  });

  it('queues writers of one instance without losing any', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'queue-1' });
    const branches = ['a', 'b', 'c', 'd'];
    await Promise.all(
      branches.map((branchId) => store.forkBranch('queue-1', { branchId, parent: { branchId: 'main', atSeq: 0 } })),
    );
    await Promise.all(
      branches.flatMap((branchId) => [
        store.appendMessages('queue-1', branchId, makeMessages(1, 3)),
        store.updateBranch('queue-1', branchId, { state: { x: 1 } }, { expectedVersion: 1 }),
      ]),
    );
    for (const branchId of branches) {
      expect((await store.readMessages('queue-1', branchId)).map((m) => m.seq)).toEqual([1, 2, 3]);
      expect((await store.getBranch('queue-1', branchId))?.version).toBe(2);
    }
  });
});
