/**
 * MongoStore over an app's own `mongodb` driver of another major version (v7 here; this package's
 * copy is v6): the whole store conformance suite, plus the error mapping on real v7 errors. Driver
 * errors are recognised by shape (`name`, `code`, `writeErrors`) and `order` ObjectIds are made by
 * the client's own driver, so nothing depends on which copy of `mongodb` the app loaded.
 */
import { StoreError } from '@baton/core';
import { MongoClient as MongoClientV7 } from 'mongodb-v7';
import { describe, expect, it } from 'vitest';
import { makeMessages } from '../../../test/conformance/fixtures.js';
import { describeStoreConformance } from '../../../test/conformance/storeConformance.js';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { MongoStore } from '../src/index.js';
import { duplicateKeyIndexes, isDuplicateKeyError, toStoreError } from '../src/collections/mongoErrors.js';
import { damageMongoCheckpoint } from './damageCheckpoint.js';
import { dropDatabase } from './testStore.js';

/** A MongoStore on a v7 client (typed as this package's client: the same API at run time). */
async function storeOnV7(
  label: string,
): Promise<{ store: MongoStore; client: MongoClientV7; url: string; dbName: string; cleanup(): Promise<void> }> {
  const url = mongoTestUrl();
  const dbName = testDatabaseName(label);
  const client = new MongoClientV7(url, { serverSelectionTimeoutMS: 5_000 });
  const store = new MongoStore(
    {
      client: client as unknown as ConstructorParameters<typeof MongoStore>[0] extends { client: infer C } ? C : never,
    },
    { dbName, maxAssetBytes: 64 * 1024 },
  );
  await store.init();
  return {
    store,
    client,
    url,
    dbName,
    cleanup: async () => {
      await store.close();
      await client.close();
      await dropDatabase(url, dbName);
    },
  };
}

describeStoreConformance(
  'MongoStore on an app-supplied mongodb v7 client',
  async () => {
    const { store, cleanup, url, dbName } = await storeOnV7('v7-conformance');
    return { store, cleanup, damageCheckpoint: damageMongoCheckpoint(url, dbName), maxAssetBytes: 64 * 1024 };
  },
  { damageable: true },
);

describe('driver errors of mongodb v7, recognised by shape', () => {
  it('a duplicate key from v7 insertOne and insertMany is recognised; a retried append stores nothing twice', async () => {
    const { store, client, dbName, cleanup } = await storeOnV7('v7-errors');
    try {
      const collection = client.db(dbName).collection<{ _id: string }>('dups');
      await collection.insertOne({ _id: 'a' });
      const single = await collection.insertOne({ _id: 'a' }).catch((error: unknown) => error);
      expect(isDuplicateKeyError(single)).toBe(true);
      const bulk = await collection
        .insertMany([{ _id: 'b' }, { _id: 'a' }], { ordered: false })
        .catch((error: unknown) => error);
      expect(duplicateKeyIndexes(bulk)).toEqual([1]);

      await store.createSession({ id: 'v7-append' });
      const messages = makeMessages(1, 2);
      await store.appendMessages('v7-append', 'main', messages);
      await store.appendMessages('v7-append', 'main', messages);
      expect((await store.readMessages('v7-append', 'main')).map((m) => m.seq)).toEqual([1, 2]);
    } finally {
      await cleanup();
    }
  });

  it('a v7 server-selection failure becomes a StoreError that says the server is unreachable', async () => {
    const client = new MongoClientV7('mongodb://127.0.0.1:9/', { serverSelectionTimeoutMS: 200 });
    try {
      const failure = await client
        .db('x')
        .collection('y')
        .findOne({})
        .catch((error: unknown) => error);
      const mapped = toStoreError('read a session', failure);
      expect(mapped).toBeInstanceOf(StoreError);
      expect((mapped as StoreError).message).toMatch(/unreachable or the connection was lost/);
      expect((mapped as StoreError).cause).toBe(failure);
    } finally {
      await client.close();
    }
  });
});
