/**
 * Hostile input: operator and dotted keys, query objects where a string belongs, path-like ids.
 * Each is refused with a named error, and nothing reaches the database.
 */
import { InvalidIdError, InvalidInputError, type Message } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint, makeMessage } from '../../../test/conformance/fixtures.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

// biome-ignore lint/suspicious/noExplicitAny: hostile callers bypass the types on purpose
const operator = { $gt: '' } as any;

describe('MongoStore hostile input', () => {
  let test: TestMongoStore;
  let sessionId: string;
  /** The victim's tenant: calls that name the session carry it, so they reach the input checks they test. */
  const acme = { tenantId: 'acme' };

  /** Every document in every collection, to prove a refused call wrote nothing. */
  const snapshot = async (): Promise<unknown[]> => {
    const all: unknown[] = [];
    for (const collection of Object.values(test.store.collections))
      all.push(...(await collection.find({}).sort({ _id: 1 }).toArray()));
    return all;
  };

  beforeAll(async () => {
    test = await createTestMongoStore('hostile');
    sessionId = (await test.store.createSession({ id: 'victim', tenantId: 'acme', metadata: { plan: 'gold' } })).id;
    await test.store.appendMessages(sessionId, 'main', [makeMessage(1), makeMessage(2)], acme);
    await test.store.saveCheckpoint(makeCheckpoint({ sessionId }), acme);
  });

  afterAll(async () => {
    await test?.cleanup();
  });

  it('refuses $ and dotted keys in session, message, branch and episode metadata and state, writing nothing', async () => {
    const { store } = test;
    const before = await snapshot();
    await expect(store.createSession({ id: 'new-1', metadata: { $where: 'sleep(1000)' } })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(store.createSession({ id: 'new-2', state: { 'profile.admin': true } })).rejects.toThrow(
      /"profile\.admin".*Rename the key/,
    );
    await expect(
      store.updateSession(sessionId, { metadata: { nested: { $set: { admin: true } } } }, { expectedVersion: 1 }),
    ).rejects.toThrow(InvalidInputError);
    await expect(store.updateSession(sessionId, { state: { 'a.b': 1 } }, { expectedVersion: 1 })).rejects.toThrow(
      InvalidInputError,
    );
    const bad: Message = makeMessage(3, { metadata: { list: [{ $inc: { seq: 1 } }] } });
    await expect(store.appendMessages(sessionId, 'main', [bad])).rejects.toThrow(/\$inc/);
    await expect(
      store.forkBranch(sessionId, { branchId: 'f', parent: { branchId: 'main', atSeq: 1 }, state: { $rename: 'x' } }),
    ).rejects.toThrow(InvalidInputError);
    await expect(
      store.updateBranch(sessionId, 'main', { state: { 'x.y': 1 } }, { expectedVersion: 1 }),
    ).rejects.toThrow(InvalidInputError);
    const episode = {
      id: 'ep-1',
      sessionId,
      startedAt: '2025-01-01T00:00:00.000Z',
      endedAt: '2025-01-01T01:00:00.000Z',
      closedReason: 'resolved',
      agents: [],
      transcript: [],
      summary: '',
      keywords: [],
      metadata: { $expr: 1 },
    };
    await expect(store.saveEpisode(episode)).rejects.toThrow(InvalidInputError);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses query objects and path-like strings where an id belongs', async () => {
    const { store } = test;
    const before = await snapshot();
    for (const id of [operator, '../x', 'a/b', '$gt', '', 'x'.repeat(200), 42]) {
      await expect(store.getSession(id)).rejects.toThrow(InvalidIdError);
      await expect(store.readMessages(id, 'main')).rejects.toThrow(InvalidIdError);
      await expect(store.readMessages(sessionId, id)).rejects.toThrow(InvalidIdError);
      await expect(store.appendMessages(id, 'main', [makeMessage(3)])).rejects.toThrow(InvalidIdError);
      await expect(store.deleteSession(id)).rejects.toThrow(InvalidIdError);
      await expect(store.deleteBranch(sessionId, id)).rejects.toThrow(InvalidIdError);
      await expect(store.loadCheckpoint(sessionId, 'main', id)).rejects.toThrow(InvalidIdError);
      await expect(store.getEpisode(id)).rejects.toThrow(InvalidIdError);
      await expect(store.getSession(sessionId, { tenantId: id })).rejects.toThrow(InvalidIdError);
      await expect(store.listSessions({ userId: id })).rejects.toThrow(InvalidIdError);
      await expect(store.findEpisodes({ tenantId: id })).rejects.toThrow(InvalidIdError);
    }
    await expect(store.createSession({ id: operator })).rejects.toThrow(InvalidIdError);
    await expect(store.createSession({ id: '../../etc/passwd' })).rejects.toThrow(
      /Invalid session id "..\/..\/etc\/passwd"/,
    );
    await expect(store.saveCheckpoint(makeCheckpoint({ sessionId, id: 'a/b' }))).rejects.toThrow(InvalidIdError);
    await expect(store.putPendingWrites(sessionId, 'main', operator, [])).rejects.toThrow(InvalidIdError);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses query objects in filters, bounds and versions', async () => {
    const { store } = test;
    const before = await snapshot();
    await expect(store.listSessions({ status: operator })).rejects.toThrow(/status must be "active" or "closed"/);
    await expect(store.listSessions({ activeBefore: operator })).rejects.toThrow(
      /activeBefore must be an ISO-8601 timestamp/,
    );
    await expect(store.listSessions({ limit: operator })).rejects.toThrow(/limit must be a whole number/);
    await expect(store.findEpisodes({ since: operator })).rejects.toThrow(InvalidInputError);
    await expect(store.readMessages(sessionId, 'main', { fromSeq: operator })).rejects.toThrow(
      /fromSeq must be a whole number/,
    );
    await expect(store.updateSession(sessionId, { status: 'closed' }, { expectedVersion: operator })).rejects.toThrow(
      /expectedVersion must be a whole number/,
    );
    await expect(store.updateSession(sessionId, { status: operator }, { expectedVersion: 1 })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(store.updateSession(sessionId, { lastActivityAt: operator }, { expectedVersion: 1 })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(store.deleteCheckpointsOlderThan(operator)).rejects.toThrow(/before must be an ISO-8601 timestamp/);
    await expect(store.deleteInactiveSessions({ idleFor: operator })).rejects.toThrow(
      /idleFor must be a number of milliseconds/,
    );
    await expect(store.pruneCheckpoints(sessionId, 'main', { last: operator })).rejects.toThrow(
      /retention.last must be a whole number/,
    );
    await expect(store.forkBranch(sessionId, { branchId: 'f', parent: operator })).rejects.toThrow(
      /parent must be \{ branchId, atSeq \}/,
    );
    expect(await snapshot()).toEqual(before);
    expect(await store.getSession(sessionId, acme)).toMatchObject({ version: 1, metadata: { plan: 'gold' } });
  });

  it('writes the change it checked, even when the caller changes its objects while the update is in flight', async () => {
    const { store } = test;
    const { id } = await store.createSession({ id: 'mutated', metadata: { plan: 'gold' } });
    const metadata: Record<string, unknown> = { plan: 'silver', nested: { tier: 1 } };
    const state: Record<string, unknown> = { step: 1 };
    const pending = store.updateSession(id, { metadata, state }, { expectedVersion: 1 });
    // After the check, before the write: a $ key and changed values the store must not see.
    metadata.$where = 'sleep(1000)';
    (metadata.nested as Record<string, unknown>).tier = 99;
    state.step = 2;
    const updated = await pending;
    expect(updated).toMatchObject({
      version: 2,
      metadata: { plan: 'silver', nested: { tier: 1 } },
      state: { step: 1 },
    });
    expect(await store.getSession(id)).toMatchObject({
      version: 2,
      metadata: { plan: 'silver', nested: { tier: 1 } },
      state: { step: 1 },
    });
    expect((await store.getSession(id))?.metadata).not.toHaveProperty('$where');
  });
});
