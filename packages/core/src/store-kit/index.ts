/**
 * The store kit (`@baton/core/store-kit`): what a store's author uses to implement the store
 * contracts of `@baton/core` (`Store`, `MessageStore`, `CheckpointStore`, …) with the same rules
 * `InMemoryStore`, `FileStore` and `MongoStore` apply. An app that only uses a store needs none of
 * it; the contracts, documents, schemas and errors stay in `@baton/core`.
 *
 * - Write rules: `assertSessionId`, `newSession`, `assertMessages`, `planAppend` (the append and
 *   conflict rules), `changedSession`, `branchLineage`, `checkpointsToPrune`, …
 * - Read rules: `parseStoredSession`, `parseStoredMessage`, `parseStoredCheckpoint`, … refuse a
 *   document a write would refuse, with `DocumentCorruptError`/`CheckpointCorruptError`.
 * - Schema versions: `withSchemaVersion` on write, `migrateDocument` on read.
 * - Tenants and assets: `assertTenantScope`, `inTenant`, `checkAssetInput`, `AssetMeter`, …
 * - Writers of one process taking turns per key (a session, a lock file): `KeyedLock`.
 *
 * The store conformance suite (`test/conformance` in the repository) checks a store against the
 * contracts.
 *
 * @example
 * ```ts
 * import type { Message } from '@baton/core';
 * import { assertMessages, assertSessionId, parseStoredMessage, planAppend } from '@baton/core/store-kit';
 *
 * const sessionId = assertSessionId(input.sessionId); // InvalidIdError when it is not an id
 * const stored = rows.map((row, i) => parseStoredMessage(row, `message ${i} of session ${sessionId}`));
 * assertMessages(messages);
 * const toWrite: Message[] = planAppend('main', messages, {
 *   firstOwnSeq: 1,
 *   lastSeq: stored.length,
 *   storedAt: (seq) => stored[seq - 1],
 * }); // ConcurrencyError when another writer appended first
 * ```
 */
export {
  AssetMeter,
  assertMaxAssetBytes,
  type CheckedAssetInput,
  checkAssetInput,
  parseStoredAssetRef,
  verifyAssetBytes,
} from '../store/assets/assetInput.js';
export {
  type DocumentKind,
  type Migration,
  type MigrationRegistry,
  migrateDocument,
  migrateFields,
  SCHEMA_VERSIONS,
  type StoredDocument,
  storedSchemaVersion,
  withSchemaVersion,
} from '../conversation/schemaVersions.js';
export {
  assertWritable,
  type CheckedDocument,
  checkBranch,
  checkEpisode,
  checkMessage,
  checkSession,
  type DocumentProblem,
  parseStoredBranch,
  parseStoredCheckpoint,
  parseStoredEpisode,
  parseStoredMessage,
  parseStoredPendingWrite,
  parseStoredSession,
  SessionChangeSchema,
} from '../store/storedDocuments.js';
export {
  applySessionChange,
  assertBatchCheckpoint,
  assertBranchId,
  assertCheckpoint,
  assertEpisode,
  assertMessages,
  assertPendingWrites,
  assertSessionChange,
  assertSessionId,
  type BranchEnd,
  branchLineage,
  branchState,
  changedBranch,
  changedSession,
  checkpointsToPrune,
  ensureBranchDeletable,
  ensureCheckpointDeletable,
  type LineageSegment,
  matchesSessionFilter,
  newSession,
  planAppend,
  sameMessage,
} from '../store/storeRules.js';
export { assertTenantScope, inTenant } from '../store/tenantScope.js';
export { nextLease } from '../store/branchLease.js';
export { KeyedLock } from '../store/keyedLock.js';
export { checkEventBatch, eventLogKey, keptBatches, pageOf } from '../store/eventLog.js';
