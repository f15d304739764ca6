import { appendFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventLogEntry, FileStore, InvalidInputError } from '../src/index.js';

const entries = (epoch: number, seq: number, from: number, count: number, text = 'x'): EventLogEntry[] =>
  Array.from({ length: count }, (_, i) => ({
    position: { epoch, seq, index: from + i },
    event: { type: 'message.delta', sessionId: 'chat-1', branchId: 'main', agent: 'billing', delta: text },
  }));

let directory: string | undefined;
const opened: FileStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

/** Two stores on one directory: what two server processes each hold. */
async function twoProcesses(): Promise<[FileStore, FileStore]> {
  directory = await mkdtemp(join(tmpdir(), 'baton-eventlog-'));
  const a = new FileStore({ directory });
  const b = new FileStore({ directory });
  opened.push(a, b);
  await a.createSession({ id: 'chat-1' });
  return [a, b];
}

describe('FileStore.appendEvents keeps the log ordered across processes without reading it whole', () => {
  it("a writer whose lease was taken over sees the new owner's positions: its older ones are refused, newer ones follow them", async () => {
    const [a, b] = await twoProcesses();
    await a.appendEvents('chat-1', 'main', entries(1, 3, 1, 4));
    await b.appendEvents('chat-1', 'main', entries(2, 3, 1, 2)); // b re-ran the turn under epoch 2
    // a, late, still at epoch 1: after its own last write, but before b's.
    await expect(a.appendEvents('chat-1', 'main', entries(1, 3, 5, 1))).rejects.toBeInstanceOf(InvalidInputError);
    await a.appendEvents('chat-1', 'main', entries(3, 4, 0, 2));
    const reader = new FileStore({ directory: directory! });
    opened.push(reader);
    const page = await reader.readEvents('chat-1', 'main');
    expect(page.entries.map((e) => Object.values(e.position).join('.'))).toEqual([
      '1.3.1',
      '1.3.2',
      '1.3.3',
      '1.3.4',
      '2.3.1',
      '2.3.2',
      '3.4.0',
      '3.4.1',
    ]);
  });

  it('after another process pruned the log (a new file), appends are checked against what it kept', async () => {
    const [a, b] = await twoProcesses();
    for (let seq = 1; seq <= 5; seq++) await a.appendEvents('chat-1', 'main', entries(1, seq, 1, 2));
    expect(await b.pruneEvents('chat-1', 'main', { maxEvents: 2 })).toBe(8);
    await expect(a.appendEvents('chat-1', 'main', entries(1, 5, 2, 1))).rejects.toBeInstanceOf(InvalidInputError);
    await a.appendEvents('chat-1', 'main', entries(1, 6, 0, 1));
    const page = await b.readEvents('chat-1', 'main');
    expect(page.start).toEqual({ epoch: 1, seq: 4, index: 2 });
    expect(page.entries.map((e) => e.position)).toEqual([
      { epoch: 1, seq: 5, index: 1 },
      { epoch: 1, seq: 5, index: 2 },
      { epoch: 1, seq: 6, index: 0 },
    ]);
  });

  it('a store opened on an existing log finds its last position, also behind a batch larger than one read (200 KB)', async () => {
    const [a] = await twoProcesses();
    await a.appendEvents('chat-1', 'main', entries(1, 1, 1, 3));
    await a.appendEvents('chat-1', 'main', entries(1, 2, 1, 2, 'y'.repeat(100_000)));
    const reopened = new FileStore({ directory: directory! });
    opened.push(reopened);
    await expect(reopened.appendEvents('chat-1', 'main', entries(1, 2, 2, 1))).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await reopened.appendEvents('chat-1', 'main', entries(1, 2, 3, 1));
    expect((await reopened.readEvents('chat-1', 'main')).entries).toHaveLength(6);
  });

  it('an append after a crash tore the last line (power loss mid-write) keeps every whole batch readable', async () => {
    const [a] = await twoProcesses();
    await a.appendEvents('chat-1', 'main', entries(1, 3, 1, 2));
    const file = join(directory!, 'sessions', 'chat-1', 'events', 'main.jsonl');
    await appendFile(file, '{"after":{"epoch":1,"seq":3,"ind'); // the dead writer's torn batch
    // The next writer is another process (a takeover): it has never seen this file.
    const b = new FileStore({ directory: directory! });
    opened.push(b);
    await b.appendEvents('chat-1', 'main', entries(2, 3, 1, 2));
    const reader = new FileStore({ directory: directory! });
    opened.push(reader);
    const positions = async () =>
      (await reader.readEvents('chat-1', 'main')).entries.map((e) => Object.values(e.position).join('.'));
    expect(await positions()).toEqual(['1.3.1', '1.3.2', '2.3.1', '2.3.2']);

    // Torn again, inside the batch that sealed nothing yet: a new store finds the last whole batch behind both.
    await appendFile(file, '\n{"after":{"ep');
    const c = new FileStore({ directory: directory! });
    opened.push(c);
    await expect(c.appendEvents('chat-1', 'main', entries(2, 3, 2, 1))).rejects.toBeInstanceOf(InvalidInputError);
    await c.appendEvents('chat-1', 'main', entries(2, 4, 0, 1));
    expect(await positions()).toEqual(['1.3.1', '1.3.2', '2.3.1', '2.3.2', '2.4.0']);
    expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(true);
  });

  it("a lease is taken over while a killed writer's session lock is still held (it is not stale yet)", async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-eventlog-'));
    // Writes wait at most 200 ms for another writer's lock; a lock goes stale only after a minute. A killed
    // writer's lock outlives it only as a lock folder (a kernel lock goes with its process).
    const options = { directory, lock: 'folder' as const, lockStaleMs: 60_000, lockWaitMs: 200 };
    const dead = new FileStore(options);
    opened.push(dead);
    await dead.createSession({ id: 'chat-1' });
    const cut = await dead.acquireBranchLease('chat-1', 'main', { owner: 'killed', ttlMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5)); // its lease expires
    // The killed process held the session's write lock (proper-lockfile's lock folder, fresh).
    await mkdir(join(directory, 'locks', 'chat-1.lock'));
    const takeover = new FileStore(options);
    opened.push(takeover);
    const taken = await takeover.acquireBranchLease('chat-1', 'main', {
      owner: 'reconciler',
      ttlMs: 60_000,
      expired: true,
    });
    expect(taken).toMatchObject({ acquired: true, lease: { owner: 'reconciler', epoch: cut.lease.epoch + 1 } });
    expect(
      await takeover.renewBranchLease('chat-1', 'main', {
        owner: 'reconciler',
        epoch: taken.lease.epoch,
        ttlMs: 60_000,
      }),
    ).toBe(true);
    // Writes still wait for the session's lock folder: the takeover's turn writes once it goes stale.
    await expect(
      takeover.updateSession('chat-1', { metadata: { a: 1 } }, { expectedVersion: 1 }),
    ).rejects.toMatchObject({
      code: 'CONCURRENCY',
      message: expect.stringContaining('is being written by another writer'),
    });
  });
});

describe('FileStore.appendEvents racing pruneEvents from another process', () => {
  it('every append that resolved is in the log, unless pruned: the log is a contiguous run ending at the last one', async () => {
    const [writer, pruner] = await twoProcesses();
    const seqs = (page: { entries: EventLogEntry[] }) => page.entries.map((e) => e.position.seq);
    let appended = 0;
    let pruning = true;
    const pruned: number[] = [];
    // The pruner keeps the newest 3 events while the writer appends one-event batches, seq 1, 2, 3, …
    const prunes = (async () => {
      while (pruning) pruned.push(await pruner.pruneEvents('chat-1', 'main', { maxEvents: 3, maxAgeMs: 3_600_000 }));
    })();
    prunes.catch(() => {
      pruning = false; // rethrown below
    });
    try {
      // Before appends took the events lock, a batch went missing within the first 10 appends (60 runs of 60).
      const until = Date.now() + 1500;
      while (pruning && (Date.now() < until || pruned.length < 20)) {
        await writer.appendEvents('chat-1', 'main', entries(1, appended + 1, 0, 1));
        appended += 1;
        // An append that resolved is in the log now, whatever the pruner did: nothing after the kept start is missing.
        const page = await pruner.readEvents('chat-1', 'main');
        const kept = seqs(page);
        expect(kept.at(-1)).toBe(appended);
        expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => appended - kept.length + 1 + i));
        expect(page.start).toEqual({ epoch: 1, seq: Math.max(1, kept[0]! - 1), index: 0 });
      }
    } finally {
      pruning = false;
      await prunes;
    }
    expect(pruned.some((n) => n > 0)).toBe(true);
  });
});
