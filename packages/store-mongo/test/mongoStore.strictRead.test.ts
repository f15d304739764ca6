/**
 * MongoStore reads as strictly as it writes: a document changed behind the store's back (by hand,
 * another program, a bad migration) so that a write would refuse it is refused on read with a
 * named error that names the document and the field, never returned and never a TypeError.
 */
import {
  CheckpointCorruptError,
  DocumentCorruptError,
  MAX_METADATA_DEPTH,
  NestingTooDeepError,
  StoreError,
} from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint, makeMessages } from '../../../test/conformance/fixtures.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('the read should have been refused'),
    (error: unknown) => error,
  );
}

describe('MongoStore strict reads', () => {
  let test: TestMongoStore;

  beforeAll(async () => {
    test = await createTestMongoStore('strict-read');
  });

  afterAll(async () => {
    await test?.cleanup();
  });

  it.each([
    ['createdAt', 'yesterday'],
    ['lastActivityAt', '2025-01-01 10:00'],
    ['userId', '$gt'],
    ['status', 'paused'],
    ['version', 0],
  ])('refuses a session whose %s is %j with a DocumentCorruptError naming the field', async (field, value) => {
    const { store } = test;
    const id = `s-${field}`;
    await store.createSession({ id, userId: 'u-1' });
    await store.collections.sessions.updateOne({ _id: id }, { $set: { [field]: value } });
    const error = await failure(store.getSession(id));
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as DocumentCorruptError).field).toBe(field);
    expect((error as Error).message).toContain(JSON.stringify(id));
  });

  it("refuses a session document whose id is not its _id (it may be another tenant's)", async () => {
    const { store } = test;
    await store.createSession({ id: 's-moved', tenantId: 'acme' });
    await store.collections.sessions.updateOne({ _id: 's-moved' }, { $set: { id: 's-other' } });
    await expect(store.getSession('s-moved', { tenantId: 'acme' })).rejects.toThrow(/does not match its _id/);
  });

  it('never returns a session whose tenantId is damaged: reads filter by tenant, and no valid scope matches it', async () => {
    const { store } = test;
    await store.createSession({ id: 's-tenant', tenantId: 'acme' });
    await store.collections.sessions.updateOne({ _id: 's-tenant' }, { $set: { tenantId: '../other' } });
    expect(await store.getSession('s-tenant', { tenantId: 'acme' })).toBeUndefined();
    expect(await store.getSession('s-tenant')).toBeUndefined();
  });

  it('refuses a session whose metadata nests deeper than MAX_METADATA_DEPTH, as createSession does, with a DocumentCorruptError', async () => {
    const { store } = test;
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let level = 1; level < MAX_METADATA_DEPTH + 1; level += 1) deep = { a: deep };
    await expect(store.createSession({ id: 's-deep-2', metadata: deep })).rejects.toBeInstanceOf(NestingTooDeepError);
    await store.createSession({ id: 's-deep' });
    await store.collections.sessions.updateOne({ _id: 's-deep' }, { $set: { metadata: deep } });
    const error = await failure(store.getSession('s-deep'));
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect((error as DocumentCorruptError).field).toBe('metadata');
    expect((error as Error).message).toContain(`more than ${MAX_METADATA_DEPTH} levels`);
  });

  it('loads a session stored without userId', async () => {
    const { store } = test;
    const created = await store.createSession({ id: 's-anonymous' });
    expect(await store.getSession('s-anonymous')).toEqual(created);
  });

  it('refuses a checkpoint whose body has a non-ISO createdAt or a bad parentId, and one whose body names another session', async () => {
    const { store } = test;
    await store.createSession({ id: 's-cp' });
    const checkpoint = makeCheckpoint({ sessionId: 's-cp' });
    await store.saveCheckpoint(checkpoint);
    const { checkpoints } = store.collections;
    const key = `s-cp/main/${checkpoint.id}`;
    for (const [field, value] of [
      ['createdAt', '01/01/2025'],
      ['parentId', '$where'],
    ] as const) {
      await checkpoints.updateOne({ _id: key }, { $set: { body: JSON.stringify({ ...checkpoint, [field]: value }) } });
      const error = await failure(store.loadCheckpoint('s-cp', 'main'));
      expect(error).toBeInstanceOf(CheckpointCorruptError);
      expect((error as Error).message).toContain(field);
    }
    await checkpoints.updateOne(
      { _id: key },
      { $set: { body: JSON.stringify({ ...checkpoint, sessionId: 's-other' }) } },
    );
    await expect(store.loadCheckpoint('s-cp', 'main')).rejects.toThrow(/of session "s-other"/);
    await checkpoints.updateOne({ _id: key }, { $set: { body: JSON.stringify(checkpoint), createdAt: 'soon' } });
    await expect(store.listCheckpoints('s-cp', 'main')).rejects.toThrow(/createdAt/);
  });

  it('refuses a pending write document without its write as CheckpointCorruptError (not a TypeError)', async () => {
    const { store } = test;
    await store.createSession({ id: 's-pw' });
    const checkpoint = makeCheckpoint({ sessionId: 's-pw' });
    await store.saveCheckpoint(checkpoint);
    await store.putPendingWrites('s-pw', 'main', checkpoint.id, [
      {
        toolCallId: 'call-1',
        toolName: 'look_up',
        agent: 'billing',
        content: 'ok',
        isError: false,
        durationMs: 3,
        createdAt: new Date().toISOString(),
      },
    ]);
    // A write whose createdAt a putPendingWrites would refuse is refused on load, naming the field.
    await store.collections.pendingWrites.updateOne({ sessionId: 's-pw' }, { $set: { 'write.createdAt': 'x' } });
    await expect(store.loadCheckpoint('s-pw', 'main')).rejects.toThrow(/createdAt: must be an ISO-8601/);
    await store.collections.pendingWrites.updateOne({ sessionId: 's-pw' }, { $unset: { write: '' } });
    await expect(store.loadCheckpoint('s-pw', 'main')).rejects.toBeInstanceOf(CheckpointCorruptError);
  });

  it('refuses a message with a non-ISO createdAt and a branch with a bad parent id', async () => {
    const { store } = test;
    await store.createSession({ id: 's-msg' });
    await store.appendMessages('s-msg', 'main', makeMessages(1, 3));
    await store.collections.messages.updateOne(
      { _id: 's-msg/main/2' },
      { $set: { createdAt: 1735689600000 as unknown as string } },
    );
    const error = await failure(store.readMessages('s-msg', 'main'));
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect((error as DocumentCorruptError).field).toBe('createdAt');
    await store.forkBranch('s-msg', { branchId: 'alt', parent: { branchId: 'main', atSeq: 1 } });
    await store.collections.branches.updateOne({ _id: 's-msg/alt' }, { $set: { 'parent.branchId': '../main' } });
    await expect(store.getBranch('s-msg', 'alt')).rejects.toThrow(/parent\.branchId/);
  });

  it('refuses an episode whose endedAt is not ISO-8601', async () => {
    const { store } = test;
    const episode = {
      id: 'ep-strict',
      sessionId: 's-ep',
      startedAt: '2025-01-01T00:00:00.000Z',
      endedAt: '2025-01-01T01:00:00.000Z',
      closedReason: 'resolved',
      agents: ['triage'],
      transcript: [],
      summary: '',
      keywords: [],
    };
    await store.saveEpisode(episode);
    await store.collections.episodes.updateOne({ _id: 'ep-strict' }, { $set: { endedAt: 'Jan 1' } });
    await expect(store.getEpisode('ep-strict')).rejects.toThrow(/endedAt/);
    await expect(store.findEpisodes({})).rejects.toBeInstanceOf(DocumentCorruptError);
  });
});
