/**
 * Helpers of the MongoStore tests: a store on the run's server (see test/support/mongoGlobalSetup.ts)
 * in a database of its own, dropped afterwards.
 */
import { MongoClient } from 'mongodb';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { MongoStore, type MongoStoreOptions } from '../src/index.js';

/** A store on its own database, and how to drop that database. */
export interface TestMongoStore {
  store: MongoStore;
  url: string;
  dbName: string;
  /** Closes the store and drops the database. */
  cleanup(): Promise<void>;
}

/** Opens a MongoStore on a fresh database named after `label`, with its indexes created. */
export async function createTestMongoStore(
  label: string,
  options: MongoStoreOptions = {},
  url = mongoTestUrl(),
): Promise<TestMongoStore> {
  const dbName = testDatabaseName(label);
  const store = new MongoStore({ url }, { ...options, dbName });
  await store.init();
  return {
    store,
    url,
    dbName,
    cleanup: async () => {
      await store.close();
      await dropDatabase(url, dbName);
    },
  };
}

/** Drops a test database. */
export async function dropDatabase(url: string, dbName: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
}
