/**
 * Appends that meet messages another MongoStore (another process) stored meanwhile: the batch is
 * inserted in seq order, a retried message is skipped and the rest still goes in, a rival message
 * makes the whole call undo its own inserts. Two stores with their own clients stand for two processes.
 */
import { ConcurrencyError } from '@baton/core';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMessage } from '../../../test/conformance/fixtures.js';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { MongoStore } from '../src/index.js';

describe('MongoStore appends racing another process', () => {
  const dbName = testDatabaseName('mongoappend');
  let a: MongoStore;
  let b: MongoStore;

  beforeAll(() => {
    a = new MongoStore({ url: mongoTestUrl() }, { dbName });
    b = new MongoStore({ url: mongoTestUrl() }, { dbName });
  });

  afterAll(async () => {
    const client = new MongoClient(mongoTestUrl());
    await client.db(dbName).dropDatabase();
    await client.close();
    await a.close();
    await b.close();
  });

  it('skips the messages another process already stored with the same ids and inserts the rest', async () => {
    await a.createSession({ id: 'race-1' });
    await b.appendMessages('race-1', 'main', [makeMessage(1), makeMessage(2)]); // b now believes the branch ends at 2
    const batch = [makeMessage(3), makeMessage(4), makeMessage(5)];
    await a.appendMessages('race-1', 'main', batch.slice(0, 2)); // the same batch, partly written by another process

    expect(await b.appendMessages('race-1', 'main', batch)).toEqual({ inserted: 1 });
    const stored = await a.readMessages('race-1', 'main');
    expect(stored.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(stored.slice(2).map((m) => m.id)).toEqual(batch.map((m) => m.id));
  });

  it('refuses with ConcurrencyError when another process holds a seq of the batch with another message; nothing of the call stays stored', async () => {
    await a.createSession({ id: 'race-2' });
    await b.appendMessages('race-2', 'main', [makeMessage(1)]); // b believes the branch ends at 1
    const rival = makeMessage(3);
    await a.appendMessages('race-2', 'main', [makeMessage(2), rival]);

    const [retried] = await a.readMessages('race-2', 'main', { fromSeq: 2, throughSeq: 2 });
    const ours = [retried!, makeMessage(3), makeMessage(4)]; // seq 2 is a retry of a stored message; seq 3 is taken by a rival
    await expect(b.appendMessages('race-2', 'main', ours)).rejects.toThrow(ConcurrencyError);
    const stored = await a.readMessages('race-2', 'main');
    expect(stored.map((m) => m.seq)).toEqual([1, 2, 3]);
    expect(stored[2]!.id).toBe(rival.id);
    expect(stored.some((m) => ours.slice(1).some((o) => o.id === m.id))).toBe(false);
  });
});
