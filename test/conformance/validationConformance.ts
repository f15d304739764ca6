import {
  type Checkpoint,
  CheckpointCorruptError,
  ConcurrencyError,
  InvalidIdError,
  InvalidInputError,
  MAX_METADATA_DEPTH,
  NestingTooDeepError,
  NotFoundError,
  type Store,
  writeStoreBatch,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { VALID_PENDING } from './checkpointDamage.js';
import { type ConformanceContext, createSessionWithMessages, createTestSession, seqs } from './conformanceContext.js';
import { BAD_IDS, makeCheckpoint, makeEpisode, makeMessage, makePendingWrite, uniqueId } from './fixtures.js';

/** Every store call that takes a session id, called with `id`. */
function callsWithSessionId(store: Store, id: string): [string, () => Promise<unknown>][] {
  return [
    ['createSession', () => store.createSession({ id })],
    ['getSession', () => store.getSession(id)],
    ['updateSession', () => store.updateSession(id, { state: {} }, { expectedVersion: 1 })],
    ['deleteSession', () => store.deleteSession(id)],
    ['appendMessages', () => store.appendMessages(id, 'main', [makeMessage(1)])],
    ['readMessages', () => store.readMessages(id, 'main')],
    ['forkBranch', () => store.forkBranch(id, { branchId: 'f', parent: { branchId: 'main', atSeq: 0 } })],
    ['getBranch', () => store.getBranch(id, 'main')],
    ['listBranches', () => store.listBranches(id)],
    ['updateBranch', () => store.updateBranch(id, 'main', { state: {} }, { expectedVersion: 1 })],
    ['deleteBranch', () => store.deleteBranch(id, 'f')],
    ['saveCheckpoint', () => store.saveCheckpoint(makeCheckpoint({ sessionId: id }))],
    ['putPendingWrites', () => store.putPendingWrites(id, 'main', 'cp-1', [makePendingWrite('c')])],
    ['loadCheckpoint', () => store.loadCheckpoint(id, 'main')],
    ['listCheckpoints', () => store.listCheckpoints(id, 'main')],
    ['pruneCheckpoints', () => store.pruneCheckpoints(id, 'main', { last: 1 })],
    ['saveEpisode', () => store.saveEpisode(makeEpisode({ sessionId: id, id: uniqueId('ep') }))],
  ];
}

/** Every store call that takes a branch id of an existing session, called with `id`. */
function callsWithBranchId(store: Store, sessionId: string, id: string): [string, () => Promise<unknown>][] {
  return [
    ['appendMessages', () => store.appendMessages(sessionId, id, [makeMessage(1)])],
    ['readMessages', () => store.readMessages(sessionId, id)],
    [
      'forkBranch (new id)',
      () => store.forkBranch(sessionId, { branchId: id, parent: { branchId: 'main', atSeq: 0 } }),
    ],
    [
      'forkBranch (parent id)',
      () => store.forkBranch(sessionId, { branchId: 'f', parent: { branchId: id, atSeq: 0 } }),
    ],
    ['getBranch', () => store.getBranch(sessionId, id)],
    ['updateBranch', () => store.updateBranch(sessionId, id, { state: {} }, { expectedVersion: 1 })],
    ['deleteBranch', () => store.deleteBranch(sessionId, id)],
    ['saveCheckpoint', () => store.saveCheckpoint(makeCheckpoint({ sessionId, branchId: id }))],
    ['putPendingWrites', () => store.putPendingWrites(sessionId, id, 'cp-1', [makePendingWrite('c')])],
    ['loadCheckpoint', () => store.loadCheckpoint(sessionId, id)],
    ['listCheckpoints', () => store.listCheckpoints(sessionId, id)],
    ['pruneCheckpoints', () => store.pruneCheckpoints(sessionId, id, { last: 1 })],
  ];
}

async function expectInvalidId(name: string, call: () => Promise<unknown>): Promise<void> {
  const outcome = await call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  expect('error' in outcome ? outcome.error : outcome, `${name} must throw InvalidIdError`).toBeInstanceOf(
    InvalidIdError,
  );
}

/** Id and input validation, and tenant isolation. */
export function describeValidationConformance(context: ConformanceContext): void {
  describe('validation', () => {
    for (const bad of BAD_IDS) {
      it(`refuses the session id ${JSON.stringify(bad)} with InvalidIdError on every call`, async () => {
        for (const [name, call] of callsWithSessionId(context.store, bad)) await expectInvalidId(name, call);
      });

      it(`refuses the branch id ${JSON.stringify(bad)} with InvalidIdError on every call`, async () => {
        const { session } = await createSessionWithMessages(context.store, 1);
        for (const [name, call] of callsWithBranchId(context.store, session.id, bad)) await expectInvalidId(name, call);
        expect((await context.store.listBranches(session.id)).map((b) => b.id)).toEqual(['main']);
      });
    }

    it('refuses unsafe checkpoint, episode, tenant and user ids with InvalidIdError', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      await expectInvalidId('saveCheckpoint', () =>
        store.saveCheckpoint(makeCheckpoint({ sessionId: session.id, id: '../cp' })),
      );
      await expectInvalidId('loadCheckpoint', () => store.loadCheckpoint(session.id, 'main', '../cp'));
      await expectInvalidId('putPendingWrites', () =>
        store.putPendingWrites(session.id, 'main', 'a/b', [makePendingWrite('c')]),
      );
      await expectInvalidId('saveEpisode', () => store.saveEpisode(makeEpisode({ id: '../ep' })));
      await expectInvalidId('getEpisode', () => store.getEpisode('$gt'));
      await expectInvalidId('createSession tenant', () => store.createSession({ id: uniqueId('s'), tenantId: '$ne' }));
      await expectInvalidId('createSession user', () => store.createSession({ id: uniqueId('s'), userId: 'a/b' }));
      await expectInvalidId('updateSession user', () =>
        store.updateSession(session.id, { userId: '../u' }, { expectedVersion: 1 }),
      );
      expect((await store.getSession(session.id))?.version).toBe(1);
    });

    it('refuses operator or dotted keys in session metadata and state with InvalidInputError', async () => {
      const { store } = context;
      const id = uniqueId('s');
      await expect(store.createSession({ id, metadata: { $set: { admin: true } } })).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.createSession({ id, metadata: { 'profile.admin': true } })).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.createSession({ id, state: { deep: [{ $gt: 1 }] } })).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      expect(await store.getSession(id)).toBeUndefined();
      const session = await createTestSession(store);
      await expect(
        store.updateSession(session.id, { metadata: { $where: 'true' } }, { expectedVersion: 1 }),
      ).rejects.toBeInstanceOf(InvalidInputError);
      await expect(
        store.updateSession(session.id, { state: { 'a.b': 1 } }, { expectedVersion: 1 }),
      ).rejects.toBeInstanceOf(InvalidInputError);
      await expect(
        store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 0 }, state: { $x: 1 } }),
      ).rejects.toBeInstanceOf(InvalidInputError);
      expect(await store.getSession(session.id)).toEqual(session);
    });

    it('refuses __proto__, constructor and prototype keys at any depth with InvalidInputError, writing nothing', async () => {
      const { store } = context;
      const hostile = [
        JSON.parse('{"__proto__":{"admin":true}}'),
        JSON.parse('{"profile":{"constructor":{"prototype":{"admin":true}}}}'),
        JSON.parse('{"list":[{"ok":1},{"prototype":1}]}'),
      ] as Record<string, unknown>[];
      const userId = uniqueId('u');
      for (const [index, bad] of hostile.entries()) {
        const id = uniqueId('s');
        await expect(
          store.createSession({ id, metadata: bad }),
          `createSession metadata #${index}`,
        ).rejects.toBeInstanceOf(InvalidInputError);
        await expect(store.createSession({ id, state: bad }), `createSession state #${index}`).rejects.toBeInstanceOf(
          InvalidInputError,
        );
        expect(await store.getSession(id)).toBeUndefined();

        const { session } = await createSessionWithMessages(store, 1);
        await expect(
          store.updateSession(session.id, { metadata: bad }, { expectedVersion: 1 }),
          `updateSession metadata #${index}`,
        ).rejects.toBeInstanceOf(InvalidInputError);
        await expect(
          store.updateSession(session.id, { state: bad }, { expectedVersion: 1 }),
          `updateSession state #${index}`,
        ).rejects.toBeInstanceOf(InvalidInputError);
        expect(await store.getSession(session.id)).toEqual(session);

        await expect(
          store.updateBranch(session.id, 'main', { state: bad }, { expectedVersion: 1 }),
          `updateBranch #${index}`,
        ).rejects.toBeInstanceOf(InvalidInputError);
        await expect(
          store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 1 }, state: bad }),
          `forkBranch #${index}`,
        ).rejects.toBeInstanceOf(InvalidInputError);
        expect(await store.listBranches(session.id)).toEqual([
          expect.objectContaining({ id: 'main', version: 1, state: {} }),
        ]);

        await expect(
          store.appendMessages(session.id, 'main', [makeMessage(2, { metadata: bad })]),
          `appendMessages #${index}`,
        ).rejects.toBeInstanceOf(InvalidInputError);
        expect(seqs(await store.readMessages(session.id, 'main'))).toEqual([1]);

        const episode = { ...makeEpisode({ sessionId: session.id, userId }), metadata: bad };
        await expect(store.saveEpisode(episode), `saveEpisode #${index}`).rejects.toBeInstanceOf(InvalidInputError);
        expect(await store.getEpisode(episode.id)).toBeUndefined();
      }
      expect(await store.findEpisodes({ userId })).toEqual([]);
    });

    it(`refuses metadata and state nested deeper than MAX_METADATA_DEPTH (${MAX_METADATA_DEPTH}) with NestingTooDeepError, and keeps them at the limit`, async () => {
      const { store } = context;
      // `levels` objects and arrays within each other: `{ a: { a: … [{ leaf: true }] } }`.
      const nested = (levels: number): Record<string, unknown> => {
        let value: unknown = { leaf: true };
        for (let level = 1; level < levels; level += 1) value = level === 1 ? [value] : { a: value };
        return value as Record<string, unknown>;
      };
      const userId = uniqueId('u');
      // 2,000 levels overflowed the stack of a copy inside the store (a RangeError, a StoreError on FileStore).
      for (const bad of [nested(MAX_METADATA_DEPTH + 1), nested(2_000)]) {
        const tooDeep = (field: string) => ({
          name: 'NestingTooDeepError',
          code: 'INVALID_INPUT',
          field,
          limit: MAX_METADATA_DEPTH,
        });
        const id = uniqueId('s');
        await expect(store.createSession({ id, metadata: bad })).rejects.toMatchObject(tooDeep('session.metadata'));
        await expect(store.createSession({ id, state: bad })).rejects.toMatchObject(tooDeep('session.state'));
        expect(await store.getSession(id)).toBeUndefined();

        const { session } = await createSessionWithMessages(store, 1);
        await expect(store.updateSession(session.id, { metadata: bad }, { expectedVersion: 1 })).rejects.toBeInstanceOf(
          NestingTooDeepError,
        );
        await expect(store.updateSession(session.id, { state: bad }, { expectedVersion: 1 })).rejects.toBeInstanceOf(
          NestingTooDeepError,
        );
        await expect(
          store.updateBranch(session.id, 'main', { state: bad }, { expectedVersion: 1 }),
        ).rejects.toBeInstanceOf(NestingTooDeepError);
        await expect(
          store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 1 }, state: bad }),
        ).rejects.toBeInstanceOf(NestingTooDeepError);
        await expect(
          store.appendMessages(session.id, 'main', [makeMessage(2, { metadata: bad })]),
        ).rejects.toBeInstanceOf(NestingTooDeepError);
        const episode = { ...makeEpisode({ sessionId: session.id, userId }), metadata: bad };
        await expect(store.saveEpisode(episode)).rejects.toBeInstanceOf(NestingTooDeepError);
        expect(await store.getSession(session.id)).toEqual(session);
        expect(await store.listBranches(session.id)).toEqual([
          expect.objectContaining({ id: 'main', version: 1, state: {} }),
        ]);
        expect(seqs(await store.readMessages(session.id, 'main'))).toEqual([1]);
        expect(await store.getEpisode(episode.id)).toBeUndefined();
      }
      const deepest = nested(MAX_METADATA_DEPTH);
      const kept = await store.createSession({ id: uniqueId('s'), metadata: deepest, state: deepest });
      expect(await store.getSession(kept.id)).toEqual(kept);
      expect(kept.metadata).toEqual(deepest);
    });

    it('refuses on save the checkpoint values a load refuses: a pending request id that breaks the id rule, non-ISO times', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 2);
      const base = makeCheckpoint({ sessionId: session.id, throughSeq: 2 });
      const { write, userInput, humanStep } = VALID_PENDING;
      const badId = { ...base, pendingRequests: [{ ...userInput, id: 'bad id\u00ff' }] } as Checkpoint;
      await expect(store.saveCheckpoint(badId)).rejects.toMatchObject({
        name: 'InvalidIdError',
        kind: 'request',
        value: 'bad id\u00ff',
      });
      const badWrite = { ...base, pendingWrites: [{ ...write, createdAt: 'x' }] };
      await expect(store.saveCheckpoint(badWrite)).rejects.toThrow(/pendingWrites\.0\.createdAt/);
      await expect(store.saveCheckpoint(badWrite)).rejects.toBeInstanceOf(CheckpointCorruptError);
      const badStep = { ...base, pendingRequests: [{ ...humanStep, createdAt: 'x' }] } as Checkpoint;
      await expect(store.saveCheckpoint(badStep)).rejects.toThrow(/pendingRequests\.0\.createdAt/);
      await expect(
        writeStoreBatch(store, { sessionId: session.id, branchId: 'main', checkpoint: badId }),
      ).rejects.toBeInstanceOf(InvalidIdError);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([]);

      const valid = { ...base, pendingRequests: [userInput, humanStep], pendingWrites: [write] } as Checkpoint;
      await store.saveCheckpoint(valid);
      await expect(
        store.putPendingWrites(session.id, 'main', valid.id, [{ ...write, toolCallId: 'call-2', createdAt: 'x' }]),
      ).rejects.toBeInstanceOf(InvalidInputError);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(valid);
    });

    it('never returns or changes another tenant data', async () => {
      const { store } = context;
      const tenantA = uniqueId('t');
      const tenantB = uniqueId('t');
      const userId = uniqueId('u');
      const { session } = await createSessionWithMessages(store, 2, { tenantId: tenantA, userId });
      const episode = makeEpisode({ sessionId: session.id, tenantId: tenantA, userId });
      await store.saveEpisode(episode);

      expect(await store.getSession(session.id, { tenantId: tenantB })).toBeUndefined();
      expect(await store.listSessions({ tenantId: tenantB })).toEqual([]);
      expect(await store.listSessions({ tenantId: tenantB, userId })).toEqual([]);
      expect(await store.findEpisodes({ tenantId: tenantB })).toEqual([]);
      expect(await store.findEpisodes({ tenantId: tenantB, userId })).toEqual([]);
      expect(await store.getEpisode(episode.id, { tenantId: tenantB })).toBeUndefined();
      expect(await store.deleteSession(session.id, { tenantId: tenantB })).toBe(false);
      await expect(
        store.updateSession(session.id, { state: { hijacked: true } }, { expectedVersion: 1, tenantId: tenantB }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        store.updateBranch(
          session.id,
          'main',
          { state: { hijacked: true } },
          { expectedVersion: 1, tenantId: tenantB },
        ),
      ).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.deleteInactiveSessions({ idleFor: 0, tenantId: tenantB })).toEqual([]);

      expect(await store.getSession(session.id, { tenantId: tenantA })).toMatchObject({ version: 1, state: {} });
      expect((await store.getBranch(session.id, 'main', { tenantId: tenantA }))?.version).toBe(1);
      expect((await store.findEpisodes({ tenantId: tenantA, userId })).map((e) => e.id)).toEqual([episode.id]);
      expect(await store.deleteSession(session.id, { tenantId: tenantA })).toBe(true);
    });

    it('refuses to create a session twice even when the second call names another tenant', async () => {
      const { store } = context;
      const session = await createTestSession(store, { tenantId: uniqueId('t') });
      await expect(store.createSession({ id: session.id, tenantId: uniqueId('t') })).rejects.toBeInstanceOf(
        ConcurrencyError,
      );
      expect(await store.getSession(session.id, { tenantId: session.tenantId! })).toEqual(session);
    });
  });
}
