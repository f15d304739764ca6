import { describeStoreConformance } from '../../../test/conformance/storeConformance.js';
import { damageMongoCheckpoint } from './damageCheckpoint.js';
import { createTestMongoStore } from './testStore.js';

describeStoreConformance(
  'MongoStore',
  async () => {
    const { store, cleanup, url, dbName } = await createTestMongoStore('conformance');
    // The suite closes the store itself; cleanup's second close is a no-op, then the database is dropped.
    return { store, cleanup, damageCheckpoint: damageMongoCheckpoint(url, dbName) };
  },
  { damageable: true },
);
