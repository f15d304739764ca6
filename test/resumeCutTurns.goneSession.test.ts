/**
 * A lease whose session was deleted: on MongoStore a lease change that checked the branch before a
 * `deleteSession` can write its lease document after the delete removed the session's leases (no
 * transactions), so `listExpiredLeases` lists a lease of a session that no longer exists. The
 * reconciler used to report it `failed` on every pass, forever, each time taking one of its `limit`
 * slots; now it reports it `gone` once and releases it. The lost race is reproduced by writing the
 * lease document back after the delete, as the late lease change would.
 */
import { HandoffBuilder } from '@baton/handoff';
import { resumeCutTurns } from '@baton/server';
import { MongoStore } from '@baton/store-mongo';
import { MongoClient } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedAgent } from '../packages/handoff/test/support/helpers.js';
import { testDatabaseName } from './support/mongoServer.js';
import { mongoTestUrl } from './support/mongoTestUrl.js';

const dbName = testDatabaseName('gone_session_lease');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('resumeCutTurns and the lease of a deleted session (MongoStore)', () => {
  const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  const raw = new MongoClient(mongoTestUrl());
  afterAll(async () => {
    await store.close();
    await raw.close();
  });

  it('reports it gone once and releases it, instead of failing on every pass', async () => {
    const triage = scriptedAgent('triage', () => ({ text: 'Hello.' }));
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage).coordinator(triage).store(store).build();
    await workflow.session({ id: 'gone-1' });
    await workflow.session({ id: 'kept-1' });
    const leases = raw.db(dbName).collection('baton_branchLeases');

    // A dead owner's lease on gone-1, left behind by a lease change that lost the race with the delete.
    expect(await store.acquireBranchLease('gone-1', 'main', { owner: 'dead-replica', ttlMs: 30 })).toMatchObject({
      acquired: true,
    });
    const late = await leases.findOne({ sessionId: 'gone-1' });
    expect(await store.deleteSession('gone-1')).toBe(true);
    expect(await leases.countDocuments({ sessionId: 'gone-1' })).toBe(0);
    await leases.insertOne(late!);
    // And a dead owner's lease on a session that still exists, with nothing left to run.
    await store.acquireBranchLease('kept-1', 'main', { owner: 'dead-replica', ttlMs: 30 });
    await sleep(60);

    const first = await resumeCutTurns({ workflow });
    expect(first.sort((a, b) => a.sessionId.localeCompare(b.sessionId))).toEqual([
      { sessionId: 'gone-1', branchId: 'main', outcome: 'gone' },
      { sessionId: 'kept-1', branchId: 'main', outcome: 'nothing' },
    ]);
    expect(await store.listExpiredLeases({ before: new Date().toISOString() })).toEqual([]);
    expect(await resumeCutTurns({ workflow })).toEqual([]);
    expect(await store.getSession('gone-1')).toBeUndefined();
  });
});
