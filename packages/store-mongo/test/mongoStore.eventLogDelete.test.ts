/**
 * Event appends and lease changes after or racing deletes of their branch or session, from another
 * MongoStore (another process, whose branch cache still knows the branch): an append lands before
 * the delete (and goes with it) or fails with NotFoundError; no event batch of a deleted branch is
 * left, a new fork of the same id starts with an empty log, and a lease change there is
 * NotFoundError, not a lease lost.
 */
import { type EventLogEntry, NotFoundError } from '@baton/core';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { MongoStore } from '../src/index.js';

const delta = (sessionId: string, branchId: string, index: number): EventLogEntry[] => [
  {
    position: { epoch: 1, seq: 1, index },
    event: { type: 'message.delta', sessionId, branchId, agent: 'a', delta: 'x' },
  },
];

/** Lets `turns` rounds of the event loop pass, so the racing call starts at a different step each time. */
async function yieldTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function settled(call: Promise<unknown>): Promise<'done' | 'not found'> {
  try {
    await call;
    return 'done';
  } catch (error) {
    if (error instanceof NotFoundError) return 'not found';
    throw error;
  }
}

describe('MongoStore: event appends racing a delete from another process', () => {
  const dbName = testDatabaseName('eventlogdelete');
  const raw = new MongoClient(mongoTestUrl());
  let a: MongoStore;
  let b: MongoStore;
  const batches = (sessionId: string, branchId: string) =>
    raw.db(dbName).collection('baton_eventLog').countDocuments({ sessionId, branchId });

  beforeAll(async () => {
    a = new MongoStore({ url: mongoTestUrl() }, { dbName });
    b = new MongoStore({ url: mongoTestUrl() }, { dbName });
    await a.init();
  });

  afterAll(async () => {
    await raw.db(dbName).dropDatabase();
    await raw.close();
    await a.close();
    await b.close();
  });

  it('deleteBranch: each append lands before it or is NotFoundError; none is left, a new fork reads none', async () => {
    const fork = { branchId: 'alt', parent: { branchId: 'main', atSeq: 0 } };
    const outcomes = { done: 0, 'not found': 0 };
    for (let i = 0; i < 20; i++) {
      const id = `branch-race-${i}`;
      await a.createSession({ id });
      await a.forkBranch(id, fork);
      await b.appendEvents(id, 'alt', delta(id, 'alt', 1)); // b knows the branch now
      const appended = yieldTurns(i % 4).then(() => b.appendEvents(id, 'alt', delta(id, 'alt', 2)));
      const deleted = yieldTurns(i % 3).then(() => a.deleteBranch(id, 'alt'));
      outcomes[await settled(appended)] += 1;
      await deleted;
      expect(await batches(id, 'alt'), `${id}: event batches of the deleted branch`).toBe(0);
      // Later appends from the process that still knows the branch are refused by name, and write nothing.
      await expect(b.appendEvents(id, 'alt', delta(id, 'alt', 3))).rejects.toBeInstanceOf(NotFoundError);
      expect(await batches(id, 'alt')).toBe(0);
      await a.forkBranch(id, fork);
      expect(await b.readEvents(id, 'alt')).toEqual({ entries: [], start: undefined });
    }
    expect(outcomes.done + outcomes['not found']).toBe(20);
  });

  it('deleteSession: a late append is NotFoundError and leaves no event batch of the session', async () => {
    for (let i = 0; i < 10; i++) {
      const id = `session-race-${i}`;
      await a.createSession({ id });
      await b.appendEvents(id, 'main', delta(id, 'main', 1));
      const appended = yieldTurns(i % 4).then(() => b.appendEvents(id, 'main', delta(id, 'main', 2)));
      const deleted = yieldTurns(i % 3).then(() => a.deleteSession(id));
      await settled(appended);
      expect(await deleted).toBe(true);
      await expect(b.appendEvents(id, 'main', delta(id, 'main', 3))).rejects.toBeInstanceOf(NotFoundError);
      expect(await batches(id, 'main'), `${id}: event batches of the deleted session`).toBe(0);
    }
  });

  it('a lease renewed or released by a process that still knows the deleted branch is NotFoundError, not lost', async () => {
    await a.createSession({ id: 'lease-gone' });
    await a.forkBranch('lease-gone', { branchId: 'alt', parent: { branchId: 'main', atSeq: 0 } });
    const alt = await b.acquireBranchLease('lease-gone', 'alt', { owner: 'b', ttlMs: 60_000 });
    const main = await b.acquireBranchLease('lease-gone', 'main', { owner: 'b', ttlMs: 60_000 });
    await a.deleteBranch('lease-gone', 'alt');
    const held = { owner: 'b', epoch: alt.lease.epoch };
    await expect(b.renewBranchLease('lease-gone', 'alt', { ...held, ttlMs: 60_000 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(b.releaseBranchLease('lease-gone', 'alt', held)).rejects.toBeInstanceOf(NotFoundError);
    // A lease lost on a branch that exists is still false.
    expect(await b.renewBranchLease('lease-gone', 'main', { owner: 'b', epoch: 9, ttlMs: 60_000 })).toBe(false);
    expect(await a.deleteSession('lease-gone')).toBe(true);
    await expect(
      b.renewBranchLease('lease-gone', 'main', { owner: 'b', epoch: main.lease.epoch, ttlMs: 60_000 }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});
