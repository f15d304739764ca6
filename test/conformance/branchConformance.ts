import { BranchHasChildrenError, ConcurrencyError, InvalidInputError, NotFoundError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import {
  type ConformanceContext,
  createSessionWithMessages,
  createTestSession,
  ids,
  seqs,
} from './conformanceContext.js';
import { makeCheckpoint, makeMessage, makeMessages } from './fixtures.js';

/** Branches: forks that refer to their parent, nested forks, updates, deletes. */
export function describeBranchConformance(context: ConformanceContext): void {
  describe('branches', () => {
    it('reads a fork as its parent first atSeq messages and then its own, storing each message once', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 5);
      const fork = await store.forkBranch(session.id, {
        branchId: 'retry',
        parent: { branchId: 'main', atSeq: 3 },
        state: { plan: 'b' },
      });
      expect(fork).toMatchObject({
        id: 'retry',
        sessionId: session.id,
        parent: { branchId: 'main', atSeq: 3 },
        state: { plan: 'b' },
        version: 1,
      });
      expect(await store.readMessages(session.id, 'retry')).toEqual(messages.slice(0, 3));

      const own = makeMessages(4, 2, { content: 'a different answer' });
      expect(await store.appendMessages(session.id, 'retry', own)).toEqual({ inserted: 2 });
      expect(await store.readMessages(session.id, 'retry')).toEqual([...messages.slice(0, 3), ...own]);
      expect(await store.readMessages(session.id, 'retry', { fromSeq: 4 })).toEqual(own);
      expect(await store.readMessages(session.id, 'main')).toEqual(messages);

      // The parent keeps growing; the fork still sees only its first 3.
      await store.appendMessages(session.id, 'main', [makeMessage(6)]);
      expect(ids(await store.readMessages(session.id, 'retry'))).toEqual(ids([...messages.slice(0, 3), ...own]));
    });

    it('starts a fork own seqs at atSeq + 1: seqs of the parent part are refused', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 4);
      await store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 2 } });
      await expect(store.appendMessages(session.id, 'f', [makeMessage(2)])).rejects.toBeInstanceOf(InvalidInputError);
      await expect(store.appendMessages(session.id, 'f', [makeMessage(4)])).rejects.toBeInstanceOf(InvalidInputError);
      // A retry of a parent message through the fork is not a new message either.
      await expect(store.appendMessages(session.id, 'f', [messages[1]!])).rejects.toBeInstanceOf(InvalidInputError);
      expect(await store.appendMessages(session.id, 'f', [makeMessage(3)])).toEqual({ inserted: 1 });
      expect(seqs(await store.readMessages(session.id, 'f'))).toEqual([1, 2, 3]);
    });

    it('follows nested forks and clips ranges across them', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 6);
      await store.forkBranch(session.id, { branchId: 'a', parent: { branchId: 'main', atSeq: 4 } });
      const ownA = makeMessages(5, 3);
      await store.appendMessages(session.id, 'a', ownA);
      await store.forkBranch(session.id, { branchId: 'b', parent: { branchId: 'a', atSeq: 6 } });
      const ownB = makeMessages(7, 2);
      await store.appendMessages(session.id, 'b', ownB);

      const expected = [...messages.slice(0, 4), ...ownA.slice(0, 2), ...ownB];
      expect(await store.readMessages(session.id, 'b')).toEqual(expected);
      expect(ids(await store.readMessages(session.id, 'b', { fromSeq: 3, throughSeq: 7 }))).toEqual(
        ids(expected.slice(2, 7)),
      );
      expect(await store.readMessages(session.id, 'a')).toEqual([...messages.slice(0, 4), ...ownA]);
      expect(await store.readMessages(session.id, 'main')).toEqual(messages);
    });

    it('forks at 0 (nothing inherited) and at the parent end', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 2);
      await store.forkBranch(session.id, { branchId: 'empty', parent: { branchId: 'main', atSeq: 0 } });
      expect(await store.readMessages(session.id, 'empty')).toEqual([]);
      await store.appendMessages(session.id, 'empty', [makeMessage(1)]);
      expect(seqs(await store.readMessages(session.id, 'empty'))).toEqual([1]);
      await store.forkBranch(session.id, { branchId: 'end', parent: { branchId: 'main', atSeq: 2 } });
      expect(await store.readMessages(session.id, 'end')).toEqual(messages);
    });

    it('refuses a fork past the parent end, of a missing parent, or over an existing branch', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 3);
      await expect(
        store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 4 } }),
      ).rejects.toBeInstanceOf(InvalidInputError);
      await expect(
        store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'nope', atSeq: 1 } }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 1 } });
      await expect(
        store.forkBranch(session.id, { branchId: 'f', parent: { branchId: 'main', atSeq: 2 } }),
      ).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(
        store.forkBranch(session.id, { branchId: 'main', parent: { branchId: 'f', atSeq: 1 } }),
      ).rejects.toBeInstanceOf(ConcurrencyError);
      // A fork's end is its inherited part plus its own messages.
      await expect(
        store.forkBranch(session.id, { branchId: 'g', parent: { branchId: 'f', atSeq: 2 } }),
      ).rejects.toBeInstanceOf(InvalidInputError);
      expect((await store.getBranch(session.id, 'f'))?.parent).toEqual({ branchId: 'main', atSeq: 1 });
    });

    it('lists and gets branches; a missing branch is undefined', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 2);
      await store.forkBranch(session.id, { branchId: 'x', parent: { branchId: 'main', atSeq: 1 } });
      await store.forkBranch(session.id, { branchId: 'y', parent: { branchId: 'x', atSeq: 1 } });
      expect((await store.listBranches(session.id)).map((b) => b.id).sort()).toEqual(['main', 'x', 'y']);
      expect(await store.getBranch(session.id, 'y')).toMatchObject({ id: 'y', parent: { branchId: 'x', atSeq: 1 } });
      expect(await store.getBranch(session.id, 'zzz')).toBeUndefined();
    });

    it('updates branch state with compare-and-set', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const updated = await store.updateBranch(session.id, 'main', { state: { step: 1 } }, { expectedVersion: 1 });
      expect(updated).toMatchObject({ id: 'main', version: 2, state: { step: 1 } });
      await expect(
        store.updateBranch(session.id, 'main', { state: { step: 99 } }, { expectedVersion: 1 }),
      ).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.getBranch(session.id, 'main')).toEqual(updated);
      await expect(
        store.updateBranch(session.id, 'nope', { state: {} }, { expectedVersion: 1 }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        store.updateBranch(session.id, 'main', { state: { $where: 1 } }, { expectedVersion: 2 }),
      ).rejects.toBeInstanceOf(InvalidInputError);
    });

    it('refuses to delete a branch with forks unless recursive, and never deletes main', async () => {
      const { store } = context;
      const { session, messages } = await createSessionWithMessages(store, 3);
      await store.forkBranch(session.id, { branchId: 'p', parent: { branchId: 'main', atSeq: 2 } });
      await store.appendMessages(session.id, 'p', [makeMessage(3)]);
      await store.forkBranch(session.id, { branchId: 'c', parent: { branchId: 'p', atSeq: 3 } });
      await store.saveCheckpoint(makeCheckpoint({ sessionId: session.id, branchId: 'c' }));

      await expect(store.deleteBranch(session.id, 'p')).rejects.toBeInstanceOf(BranchHasChildrenError);
      expect((await store.listBranches(session.id)).map((b) => b.id).sort()).toEqual(['c', 'main', 'p']);
      await expect(store.deleteBranch(session.id, 'main')).rejects.toBeInstanceOf(InvalidInputError);
      await expect(store.deleteBranch(session.id, 'main', { recursive: true })).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.deleteBranch(session.id, 'nope')).rejects.toBeInstanceOf(NotFoundError);

      await store.deleteBranch(session.id, 'p', { recursive: true });
      expect((await store.listBranches(session.id)).map((b) => b.id)).toEqual(['main']);
      expect(await store.getBranch(session.id, 'c')).toBeUndefined();
      await expect(store.readMessages(session.id, 'p')).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.readMessages(session.id, 'main')).toEqual(messages);
    });

    it('deletes a leaf fork with its messages and checkpoints; a new fork of that id starts empty', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 2);
      await store.forkBranch(session.id, { branchId: 'leaf', parent: { branchId: 'main', atSeq: 1 } });
      await store.appendMessages(session.id, 'leaf', makeMessages(2, 3));
      await store.saveCheckpoint(makeCheckpoint({ sessionId: session.id, branchId: 'leaf' }));
      await store.deleteBranch(session.id, 'leaf');

      await store.forkBranch(session.id, { branchId: 'leaf', parent: { branchId: 'main', atSeq: 2 } });
      expect(seqs(await store.readMessages(session.id, 'leaf'))).toEqual([1, 2]);
      expect(await store.loadCheckpoint(session.id, 'leaf')).toBeUndefined();
      expect(await store.appendMessages(session.id, 'leaf', [makeMessage(3)])).toEqual({ inserted: 1 });
    });
  });
}
