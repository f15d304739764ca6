import { describeStoreConformance } from '../../../test/conformance/storeConformance.js';
import { createTestMongoStore } from './testStore.js';

describeStoreConformance('MongoStore', async () => {
  const { store, cleanup } = await createTestMongoStore('conformance');
  // The suite closes the store itself; cleanup's second close is a no-op, then the database is dropped.
  return { store, cleanup };
});
