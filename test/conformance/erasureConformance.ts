import { type EraseUserResult, InvalidIdError, NotFoundError, type Store, type TenantScope } from '@baton/core';
import { describe, expect, it } from 'vitest';
import type { ConformanceContext } from './conformanceContext.js';
import { BAD_IDS, makeCheckpointChain, makeEpisode, makeMessages, makePendingWrite, uniqueId } from './fixtures.js';

/** A session of the user with `count` messages on main and an episode; with `fork`, a fork with one message and three checkpoints. */
async function userSession(store: Store, owner: TenantScope & { userId: string }, count: number, fork = false) {
  const scope = owner.tenantId === undefined ? {} : { tenantId: owner.tenantId };
  const session = await store.createSession({ id: uniqueId('s'), ...owner });
  await store.appendMessages(session.id, 'main', makeMessages(1, count), scope);
  if (fork) {
    await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } }, scope);
    await store.appendMessages(session.id, 'alt', makeMessages(3, 1), scope);
    const [first, second] = makeCheckpointChain(session.id, 2);
    for (const checkpoint of [first!, second!, makeCheckpointChain(session.id, 1, { branchId: 'alt' })[0]!])
      await store.saveCheckpoint(checkpoint, scope);
    await store.putPendingWrites(session.id, 'main', first!.id, [makePendingWrite('call-1')], scope);
  }
  const episode = makeEpisode({ sessionId: session.id, ...owner });
  await store.saveEpisode(episode);
  return { session, episode, scope };
}

/** Erasure: deleting a session takes its episodes; deleting one episode; erasing everything of one user. */
export function describeErasureConformance(context: ConformanceContext): void {
  describe('erasure', () => {
    it("deletes a session's episodes with it, and no other session's", async () => {
      const { store } = context;
      const owner = { tenantId: uniqueId('t'), userId: uniqueId('u') };
      const gone = await userSession(store, owner, 2);
      const kept = await userSession(store, owner, 2);
      expect(await store.deleteSession(gone.session.id, gone.scope)).toBe(true);
      expect(await store.getEpisode(gone.episode.id, gone.scope)).toBeUndefined();
      expect((await store.findEpisodes(owner)).map((e) => e.id)).toEqual([kept.episode.id]);
    });

    it('deletes one episode of the tenant by id, and never another tenant\u2019s', async () => {
      const { store } = context;
      const owner = { tenantId: uniqueId('t'), userId: uniqueId('u') };
      const episode = makeEpisode(owner);
      await store.saveEpisode(episode);
      expect(await store.deleteEpisode(episode.id, { tenantId: uniqueId('t') })).toBe(false);
      expect(await store.deleteEpisode(episode.id)).toBe(false);
      expect(await store.getEpisode(episode.id, owner)).toEqual(episode);
      expect(await store.deleteEpisode(episode.id, owner)).toBe(true);
      expect(await store.getEpisode(episode.id, owner)).toBeUndefined();
      expect(await store.findEpisodes(owner)).toEqual([]);
      expect(await store.deleteEpisode(episode.id, owner)).toBe(false);
    });

    it("erases every session, branch, message, checkpoint and episode of one user, counting each kind, and nobody else's", async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const userId = uniqueId('u');
      const forked = await userSession(store, { tenantId, userId }, 4, true);
      const plain = await userSession(store, { tenantId, userId }, 2);
      const otherUser = await userSession(store, { tenantId, userId: uniqueId('u') }, 3, true);
      const otherTenant = await userSession(store, { tenantId: uniqueId('t'), userId }, 3, true);
      const noTenant = await userSession(store, { userId }, 1);

      const erased = await store.eraseUser({ tenantId, userId });
      // 4 + 1 (the fork's own) + 2 messages; 2 + 1 checkpoints; main, alt and main branches.
      expect(erased).toEqual({
        sessions: 2,
        branches: 3,
        messages: 7,
        checkpoints: 3,
        episodes: 2,
        assets: 0,
      } satisfies EraseUserResult);

      for (const { session, episode, scope } of [forked, plain]) {
        expect(await store.getSession(session.id, scope)).toBeUndefined();
        await expect(store.readMessages(session.id, 'main', scope)).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.listCheckpoints(session.id, 'main', scope)).rejects.toBeInstanceOf(NotFoundError);
        expect(await store.getEpisode(episode.id, scope)).toBeUndefined();
      }
      expect(await store.findEpisodes({ tenantId, userId })).toEqual([]);
      expect(await store.listSessions({ tenantId, userId })).toEqual([]);
      for (const survivor of [otherUser, otherTenant, noTenant]) {
        const { session, episode, scope } = survivor;
        expect(await store.getSession(session.id, scope)).toEqual(session);
        expect(await store.getEpisode(episode.id, scope)).toEqual(episode);
      }
      for (const { session, scope } of [otherUser, otherTenant]) {
        expect(await store.readMessages(session.id, 'main', scope)).toHaveLength(3);
        expect(await store.readMessages(session.id, 'alt', scope)).toHaveLength(3);
        expect(await store.listCheckpoints(session.id, 'main', scope)).toHaveLength(2);
        expect(
          (
            await store.loadCheckpoint(
              session.id,
              'main',
              (
                await store.listCheckpoints(session.id, 'main', scope)
              )[0]!.id,
              scope,
            )
          )?.pendingWrites,
        ).toHaveLength(1);
      }
      expect(await store.eraseUser({ tenantId, userId })).toEqual({
        sessions: 0,
        branches: 0,
        messages: 0,
        checkpoints: 0,
        episodes: 0,
        assets: 0,
      });
    });

    it('erases a user without a tenant without touching the same user id under a tenant', async () => {
      const { store } = context;
      const userId = uniqueId('u');
      const untenanted = await userSession(store, { userId }, 2);
      const tenanted = await userSession(store, { tenantId: uniqueId('t'), userId }, 2);
      expect(await store.eraseUser({ userId })).toEqual({
        sessions: 1,
        branches: 1,
        messages: 2,
        checkpoints: 0,
        episodes: 1,
        assets: 0,
      });
      expect(await store.getSession(untenanted.session.id)).toBeUndefined();
      expect(await store.getSession(tenanted.session.id, tenanted.scope)).toEqual(tenanted.session);
      expect(await store.getEpisode(tenanted.episode.id, tenanted.scope)).toEqual(tenanted.episode);
    });

    for (const bad of BAD_IDS) {
      it(`refuses to erase with the unsafe id ${JSON.stringify(bad)}, erasing nothing`, async () => {
        const { store } = context;
        const { session, scope } = await userSession(store, { tenantId: uniqueId('t'), userId: uniqueId('u') }, 1);
        await expect(store.eraseUser({ userId: bad })).rejects.toBeInstanceOf(InvalidIdError);
        await expect(store.eraseUser({ tenantId: bad, userId: session.userId! })).rejects.toBeInstanceOf(
          InvalidIdError,
        );
        expect(await store.getSession(session.id, scope)).toEqual(session);
      });
    }
  });
}
