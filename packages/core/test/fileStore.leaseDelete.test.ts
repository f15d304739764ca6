import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventLogEntry, FileStore, NotFoundError } from '../src/index.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('lease-delete');
const opened: FileStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/** Two stores on one directory: what two server processes each hold. */
async function twoProcesses(): Promise<{ directory: string; a: FileStore; b: FileStore }> {
  const directory = await tempDir();
  const a = new FileStore({ directory });
  const b = new FileStore({ directory });
  opened.push(a, b);
  return { directory, a, b };
}

/** Lets `turns` rounds of the event loop pass, so the racing call starts at a different step each time. */
async function yieldTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

const delta = (sessionId: string, index = 1): EventLogEntry[] => [
  {
    position: { epoch: 1, seq: 1, index },
    event: { type: 'message.delta', sessionId, branchId: 'main', agent: 'a', delta: 'x' },
  },
];

/** The outcome of a call racing a delete: done, or the store's error for a missing session. */
async function settled(call: Promise<unknown>): Promise<'done' | 'not found'> {
  try {
    await call;
    return 'done';
  } catch (error) {
    if (error instanceof NotFoundError) return 'not found';
    throw error;
  }
}

describe('FileStore: lease changes and event appends racing a delete of the session', () => {
  it('leave nothing of the session behind: each lands before the delete or fails with NotFoundError', async () => {
    const { directory, a, b } = await twoProcesses();
    const outcomes = { done: 0, 'not found': 0 };
    for (let i = 0; i < 60; i++) {
      const id = `race-${i}`;
      await a.createSession({ id });
      const held = await a.acquireBranchLease(id, 'main', { owner: 'first', ttlMs: 1 });
      expect(held.acquired).toBe(true);
      const calls = [
        // Another process takes over the expired lease, renews and releases it, logs an event.
        b.acquireBranchLease(id, 'main', { owner: 'second', ttlMs: 60_000, expired: true }),
        yieldTurns(i % 7).then(() => b.renewBranchLease(id, 'main', { owner: 'first', epoch: 1, ttlMs: 60_000 })),
        yieldTurns(i % 5).then(() => b.releaseBranchLease(id, 'main', { owner: 'first', epoch: 1 })),
        yieldTurns(i % 3).then(() => b.appendEvents(id, 'main', delta(id))),
      ];
      const deleted = yieldTurns(i % 11).then(() => a.deleteSession(id));
      for (const outcome of await Promise.all(calls.map(settled))) outcomes[outcome] += 1;
      expect(await deleted).toBe(true);
      // Nothing of the session is left on disk, and no store sees a lease or events of it.
      expect(existsSync(join(directory, 'sessions', id)), `sessions/${id} after the delete`).toBe(false);
      expect(await b.getBranchLease(id, 'main')).toBeUndefined();
      // Every later lease change and append is refused by name, and still writes nothing.
      await expect(b.acquireBranchLease(id, 'main', { owner: 'late', ttlMs: 60_000 })).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(b.releaseBranchLease(id, 'main', { owner: 'first', epoch: 1 })).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(b.appendEvents(id, 'main', delta(id))).rejects.toBeInstanceOf(NotFoundError);
      expect(existsSync(join(directory, 'sessions', id))).toBe(false);
    }
    // The sessions folder is empty, and no lease of a deleted session is left for a reconciler to take over.
    expect(await readdir(join(directory, 'sessions'))).toEqual([]);
    expect(await a.listExpiredLeases({ before: new Date(Date.now() + 120_000).toISOString() })).toEqual([]);
    // Both outcomes happened, so the calls did race the deletes.
    expect(outcomes['not found']).toBeGreaterThan(0);
    expect(outcomes.done).toBeGreaterThan(0);
  });
});

describe('FileStore: event appends and prunes racing a delete of the branch', () => {
  it('leave no event log of the deleted branch: each lands before the delete or fails with NotFoundError', async () => {
    const { directory, a, b } = await twoProcesses();
    const outcomes = { done: 0, 'not found': 0 };
    const fork = { branchId: 'alt', parent: { branchId: 'main', atSeq: 0 } };
    for (let i = 0; i < 60; i++) {
      const id = `branch-race-${i}`;
      await a.createSession({ id });
      await a.forkBranch(id, fork);
      await a.appendEvents(id, 'alt', delta(id)); // one batch: the prune below drops it once the next is in
      const calls = [
        yieldTurns(i % 3).then(() => b.appendEvents(id, 'alt', delta(id, 2))),
        yieldTurns(i % 5).then(() => b.pruneEvents(id, 'alt', { maxEvents: 0 })),
      ];
      const deleted = yieldTurns(i % 7).then(() => a.deleteBranch(id, 'alt'));
      for (const outcome of await Promise.all(calls.map(settled))) outcomes[outcome] += 1;
      await deleted;
      // No events file of the deleted branch, and a new fork of the same id starts with an empty log.
      expect(existsSync(join(directory, 'sessions', id, 'events', 'alt.jsonl')), `${id} alt.jsonl`).toBe(false);
      await expect(b.appendEvents(id, 'alt', delta(id))).rejects.toBeInstanceOf(NotFoundError);
      await a.forkBranch(id, fork);
      expect(await b.readEvents(id, 'alt')).toEqual({ entries: [], start: undefined });
    }
    expect(outcomes['not found']).toBeGreaterThan(0);
    expect(outcomes.done).toBeGreaterThan(0);
  });
});
