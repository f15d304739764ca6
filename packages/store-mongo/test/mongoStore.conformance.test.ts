import { describeStoreConformance } from '../../../test/conformance/storeConformance.js';
import { damageMongoCheckpoint } from './damageCheckpoint.js';
import { createTestMongoStore } from './testStore.js';

describeStoreConformance(
  'MongoStore',
  async () => {
    const maxAssetBytes = 300 * 1024; // past one GridFS chunk (255 KiB), so the limit is met mid-upload
    const { store, cleanup, url, dbName } = await createTestMongoStore('conformance', { maxAssetBytes });
    // The suite closes the store itself; cleanup's second close is a no-op, then the database is dropped.
    return { store, cleanup, damageCheckpoint: damageMongoCheckpoint(url, dbName), maxAssetBytes };
  },
  { damageable: true },
);
