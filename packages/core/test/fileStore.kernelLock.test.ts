/**
 * FileStore's default session lock, the kernel lock of `locks/<sessionId>.lock`, against real
 * processes: one that holds the lock makes writers wait (and give up after `lockWaitMs`, writing
 * nothing); once it is SIGKILLed, the next write goes through at once, long before a lock folder
 * would have gone stale. A writer that takes the lock again at once does not starve a waiting one. A folder-lock process and a kernel-lock process keep out of each other, and
 * no lock file is left of a deleted session or of a write to one that does not exist. A lock file
 * kept open between writes is not taken for the lock of a session deleted and made again meanwhile.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { access, mkdir, readdir, readlink, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConcurrencyError, FileStore, NotFoundError, StoreError } from '../src/index.js';
import { makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-kernel-lock');
const kernelLockModule = createRequire(import.meta.url).resolve('fs-native-extensions');

/** Starts a process that takes the kernel lock of `path` (as a FileStore writer does), says `held`, and waits. */
async function holdLock(path: string): Promise<ChildProcess> {
  const script = `
    const fs = require('node:fs');
    const locks = require(${JSON.stringify(kernelLockModule)});
    const fd = fs.openSync(${JSON.stringify(path)}, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    if (!locks.tryLock(fd)) { console.log('busy'); process.exit(1); }
    console.log('held');
    setInterval(() => {}, 60_000);
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const said = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').once('data', (chunk: string) => resolve(chunk.trim()));
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code}`)));
  });
  expect(said).toBe('held');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** How many descriptors of this process are open on files of `folder` (Linux; elsewhere 0). */
async function openIn(folder: string): Promise<number> {
  if (process.platform !== 'linux') return 0;
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return targets.filter((target) => target.startsWith(`${folder}/`)).length;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('FileStore kernel session lock', () => {
  it('makes a writer wait for a live holder in another process, then give up after lockWaitMs with nothing written', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, lockWaitMs: 300 });
    expect(await store.createSession({ id: 'held-1' })).toMatchObject({ id: 'held-1' });
    const holder = await holdLock(join(directory, 'locks', 'held-1.lock'));
    try {
      const began = Date.now();
      const failure = store.appendMessages('held-1', 'main', [makeMessage(1)]);
      await expect(failure).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(failure).rejects.toThrow(/being written by another writer/);
      expect(Date.now() - began).toBeGreaterThanOrEqual(250);
      expect(await store.readMessages('held-1', 'main')).toEqual([]);
    } finally {
      await kill(holder);
    }
  });

  it('lets the next writer in at once when the holder is SIGKILLed: the kernel drops its lock, nothing goes stale', async () => {
    const directory = await tempDir();
    // A lock folder would hold up writers for a minute; this store waits at most 5 s.
    const store = new FileStore({ directory, lockStaleMs: 60_000, lockWaitMs: 5_000 });
    await store.createSession({ id: 'killed-1' });
    const holder = await holdLock(join(directory, 'locks', 'killed-1.lock'));
    const write = store.appendMessages('killed-1', 'main', [makeMessage(1)]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await kill(holder);
    expect(await write).toEqual({ inserted: 1 });
    expect((await store.readMessages('killed-1', 'main')).map((m) => m.seq)).toEqual([1]);
  });

  it('lets a waiting writer in between the writes of another that takes the lock again at once', async () => {
    const directory = await tempDir();
    const busy = new FileStore({ directory, lockWaitMs: 2_000 });
    await busy.createSession({ id: 'hot-1' });
    // Another store object on the folder has locks of its own, as another process would.
    const other = new FileStore({ directory, lockWaitMs: 2_000 });
    let stop = false;
    let busyWrites = 0;
    const hammer = (async () => {
      for (let version = 1; !stop; version += 1) {
        await busy.updateSession('hot-1', { metadata: { n: version } }, { expectedVersion: version });
        busyWrites += 1;
      }
    })();
    try {
      for (let seq = 1; seq <= 20; seq += 1)
        expect(await other.appendMessages('hot-1', 'main', [makeMessage(seq)])).toEqual({ inserted: 1 });
    } finally {
      stop = true;
      await hammer;
    }
    expect(busyWrites).toBeGreaterThan(0);
    expect((await busy.readMessages('hot-1', 'main')).map((m) => m.seq)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  it('waits for a lock folder at the same path (a folder-lock process writing) and breaks it once stale', async () => {
    const directory = await tempDir();
    const creator = new FileStore({ directory });
    await creator.createSession({ id: 'mixed-1' });
    await creator.close();
    const store = new FileStore({ directory, lockStaleMs: 2_000, lockWaitMs: 300 });
    const path = join(directory, 'locks', 'mixed-1.lock');
    await rm(path);
    await mkdir(path); // a folder-lock process holds it, fresh
    await expect(store.appendMessages('mixed-1', 'main', [makeMessage(1)])).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await store.readMessages('mixed-1', 'main')).toEqual([]);
    // Stale (its process died): broken, then the write goes through.
    const patient = new FileStore({ directory, lockStaleMs: 2_000, lockWaitMs: 5_000 });
    expect(await patient.appendMessages('mixed-1', 'main', [makeMessage(1)])).toEqual({ inserted: 1 });
  });

  it('keeps a folder-lock process out of a session whose lock file a kernel-lock process holds', async () => {
    const directory = await tempDir();
    const kernel = new FileStore({ directory });
    await kernel.createSession({ id: 'mixed-2' });
    const holder = await holdLock(join(directory, 'locks', 'mixed-2.lock'));
    try {
      const folder = new FileStore({ directory, lock: 'folder', lockStaleMs: 60_000, lockWaitMs: 300 });
      // It finds a file where it makes its folder: held (ConcurrencyError), or, once the file is old, not a
      // folder it can break (StoreError). Either way it does not write.
      const failure = await folder.appendMessages('mixed-2', 'main', [makeMessage(1)]).catch((error: unknown) => error);
      expect(failure instanceof ConcurrencyError || failure instanceof StoreError).toBe(true);
      expect(await kernel.readMessages('mixed-2', 'main')).toEqual([]);
    } finally {
      await kill(holder);
    }
  });

  it('locks the file of a session deleted and made again by another store, not the one it kept open from before', async () => {
    const directory = await tempDir();
    const kept = new FileStore({ directory, lockWaitMs: 300 });
    const other = new FileStore({ directory });
    await kept.createSession({ id: 'again-1' });
    await kept.appendMessages('again-1', 'main', [makeMessage(1)]); // its lock file stays open in `kept`
    await other.deleteSession('again-1');
    await other.createSession({ id: 'again-1' });
    const holder = await holdLock(join(directory, 'locks', 'again-1.lock'));
    try {
      await expect(kept.appendMessages('again-1', 'main', [makeMessage(1)])).rejects.toBeInstanceOf(ConcurrencyError);
    } finally {
      await kill(holder);
    }
    await expect(kept.appendMessages('again-1', 'main', [makeMessage(1)])).resolves.toEqual({ inserted: 1 });
    expect(await other.readMessages('again-1', 'main')).toHaveLength(1);
    await kept.close();
    await other.close();
    expect(await openIn(join(directory, 'locks'))).toBe(0);
  });

  it('leaves no lock file of a deleted session, nor of a write to a session that does not exist', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'gone-1' });
    await store.appendMessages('gone-1', 'main', [makeMessage(1)]);
    await store.forkBranch('gone-1', { branchId: 'alt', parent: { branchId: 'main', atSeq: 1 } });
    await store.acquireBranchLease('gone-1', 'alt', { owner: 'a', ttlMs: 60_000 });
    await store.appendEvents('gone-1', 'alt', [
      {
        position: { epoch: 1, seq: 1, index: 1 },
        event: { type: 'turn.started', sessionId: 'gone-1', branchId: 'alt', turn: 1 },
      },
    ]);
    expect((await readdir(join(directory, 'locks'))).sort()).toEqual([
      'gone-1.lock',
      'gone-1@events@alt.lock',
      'gone-1@lease@alt.lock',
    ]);
    await store.deleteSession('gone-1');
    await expect(store.appendMessages('never-1', 'main', [makeMessage(1)])).rejects.toBeInstanceOf(NotFoundError);
    await store.close();
    expect(await readdir(join(directory, 'locks'))).toEqual([]);
    expect(await exists(join(directory, 'sessions', 'gone-1'))).toBe(false);
  });
});
