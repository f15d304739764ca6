/**
 * Session assets end to end on MongoStore (the run's FerretDB, or MONGODB_URL): a user uploads a
 * receipt during a conversation, the agent's tool reads it by reference, a fresh "process" (a new
 * MongoStore with its own client, a new workflow) reads it and runs another turn on it, and
 * `eraseUser` removes it, chunks included. The FileStore twin is
 * packages/handoff/test/handoff.assets.test.ts (same desk).
 */
import { assetRefsOf } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { afterAll, describe, expect, it } from 'vitest';
import { expensesWorkflow, READ, RECEIPT } from '../packages/handoff/test/support/expensesDesk.js';
import { collect, ofType } from '../packages/handoff/test/support/helpers.js';
import { testDatabaseName } from './support/mongoServer.js';
import { mongoTestUrl } from './support/mongoTestUrl.js';

const dbName = testDatabaseName('assets_e2e');
const opened: MongoStore[] = [];

/** A fresh process's store: a new MongoStore with a client of its own, on the shared database. */
function openStore(): MongoStore {
  const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  opened.push(store);
  return store;
}

describe('session assets on MongoStore', () => {
  afterAll(async () => {
    await opened[0]?.db.dropDatabase();
    for (const store of opened) await store.close();
  });

  it('uploads mid-conversation, a tool reads it, a new process reads it again, eraseUser removes it', async () => {
    const owner = { tenantId: 'acme', userId: 'u-8' };
    const first = openStore();
    const session = await expensesWorkflow(first).workflow.session({ id: 'expense-m1', ...owner });
    const receipt = await session.attach({
      name: 'receipt.txt',
      contentType: 'text/plain; charset=utf-8',
      bytes: Buffer.from(RECEIPT),
    });
    const events = await collect(session.send('Please file my lunch receipt', { assets: [receipt] }));
    expect(ofType(events, 'tool.result').map((e) => e.content)).toEqual([READ]);
    const [user] = await first.readMessages('expense-m1', 'main', { tenantId: 'acme' });
    expect(assetRefsOf(user!)).toEqual([receipt]);
    const checkpoint = await first.loadCheckpoint('expense-m1', 'main', undefined, { tenantId: 'acme' });
    expect(JSON.stringify(checkpoint)).not.toContain('ACME Café');

    const second = openStore();
    const reopened = await expensesWorkflow(second).workflow.session({ id: 'expense-m1', ...owner });
    expect(await reopened.assets.list()).toEqual([receipt]);
    const again = await collect(reopened.send('File it once more', { assets: [receipt] }));
    expect(ofType(again, 'tool.result').map((e) => e.content)).toEqual([READ]);

    expect(await second.eraseUser(owner)).toMatchObject({ sessions: 1, assets: 1 });
    expect(await second.collections.assetFiles.countDocuments({ sessionId: 'expense-m1' })).toBe(0);
    expect(await second.collections.assetChunks.countDocuments({ sessionId: 'expense-m1' })).toBe(0);
  });
});
