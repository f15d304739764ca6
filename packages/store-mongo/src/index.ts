export {
  type BranchDoc,
  type CheckpointDoc,
  collectionNames,
  type EpisodeDoc,
  type MessageDoc,
  type MetaDoc,
  type MongoCollections,
  type PendingWriteDoc,
  type SessionDoc,
} from './collections/mongoCollections.js';
export type { TenantFieldsReport } from './migrations/migrateTenantFields.js';
export { MongoStore } from './mongoStore.js';
export type { MongoStoreConnection, MongoStoreOptions } from './mongoStoreOptions.js';
