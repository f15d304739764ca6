import * as root from '@baton/core';
import * as storeKit from '@baton/core/store-kit';
import type { BranchEnd, CheckedDocument } from '@baton/core/store-kit';
import { describe, expect, it } from 'vitest';

/** The values a store's author needs and an app does not: `@baton/core/store-kit` only. */
const STORE_KIT_VALUES = [
  'AssetMeter',
  'assertMaxAssetBytes',
  'checkAssetInput',
  'parseStoredAssetRef',
  'verifyAssetBytes',
  'migrateDocument',
  'migrateFields',
  'SCHEMA_VERSIONS',
  'storedSchemaVersion',
  'withSchemaVersion',
  'assertWritable',
  'checkBranch',
  'checkEpisode',
  'checkMessage',
  'checkSession',
  'parseStoredBranch',
  'parseStoredCheckpoint',
  'parseStoredEpisode',
  'parseStoredMessage',
  'parseStoredPendingWrite',
  'parseStoredSession',
  'SessionChangeSchema',
  'applySessionChange',
  'assertBatchCheckpoint',
  'assertBranchId',
  'assertCheckpoint',
  'assertEpisode',
  'assertMessages',
  'assertPendingWrites',
  'assertSessionChange',
  'assertSessionId',
  'branchLineage',
  'branchState',
  'changedBranch',
  'changedSession',
  'checkpointsToPrune',
  'ensureBranchDeletable',
  'ensureCheckpointDeletable',
  'matchesSessionFilter',
  'newSession',
  'planAppend',
  'sameMessage',
  'assertTenantScope',
  'inTenant',
  'nextLease',
  'KeyedLock',
  'checkEventBatch',
  'eventLogKey',
  'keptBatches',
  'pageOf',
].sort();

/** What an app uses, which stays at the root (a sample of each kind: stores, schemas, errors, helpers). */
const ROOT_VALUES = [
  'InMemoryStore',
  'FileStore',
  'MessageSchema',
  'SessionSchema',
  'parseCheckpoint',
  'DocumentCorruptError',
  'UnsupportedSchemaVersionError',
  'DEFAULT_MAX_ASSET_BYTES',
  'sessionAssets',
  'writeStoreBatch',
  'findOpenToolCalls',
  'isIsoTimestamp',
];

describe('@baton/core/store-kit', () => {
  it('exports exactly the store writer values, and nothing an app needs', () => {
    expect(Object.keys(storeKit).sort()).toEqual(STORE_KIT_VALUES);
  });

  it('keeps them off the root export, which keeps what an app uses', () => {
    const onRoot = STORE_KIT_VALUES.filter((name) => name in root);
    expect(onRoot).toEqual([]);
    for (const name of ROOT_VALUES) expect(root, name).toHaveProperty(name);
  });

  it('keeps the store writer types off the root too (checked by tsc)', () => {
    // @ts-expect-error BranchEnd: exported by `@baton/core/store-kit` only
    const end: root.BranchEnd = { firstOwnSeq: 1, lastSeq: 0, storedAt: () => undefined };
    // @ts-expect-error CheckedDocument: likewise
    const checked: root.CheckedDocument<root.Message> = storeKit.checkMessage({});
    expect([end.firstOwnSeq, checked.ok]).toEqual([1, false]);
  });

  it('gives store writers the rules the bundled stores apply', async () => {
    const store = new root.InMemoryStore();
    await store.createSession({ id: 'kit-1' });
    const [stored] = await store.listSessions();
    expect(storeKit.parseStoredSession(stored, 'session "kit-1"').id).toBe('kit-1');
    expect(() => storeKit.assertSessionId('not an id')).toThrow(root.InvalidIdError);
    const end: BranchEnd = { firstOwnSeq: 1, lastSeq: 0, storedAt: () => undefined };
    const message = { id: 'm1', seq: 2, role: 'user' as const, content: 'hi', createdAt: root.isoNow() };
    expect(() => storeKit.planAppend('main', [message], end)).toThrow(root.InvalidInputError);
    const checked: CheckedDocument<root.Message> = storeKit.checkMessage({ ...message, seq: 0 });
    expect(checked).toMatchObject({ ok: false, field: 'seq' });
  });
});
