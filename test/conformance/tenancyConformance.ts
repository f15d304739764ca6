import { type Checkpoint, InvalidIdError, NotFoundError, type Store, type TenantScope } from '@baton/core';
import { describe, expect, it } from 'vitest';
import type { ConformanceContext } from './conformanceContext.js';
import { BAD_IDS, makeCheckpointChain, makeEpisode, makeMessages, makePendingWrite, uniqueId } from './fixtures.js';

/** A session of `owner` with a fork, messages on both branches, two checkpoints (one with a pending write) and an episode. */
async function ownedSession(store: Store, owner: TenantScope) {
  const userId = uniqueId('u');
  const session = await store.createSession({ id: uniqueId('s'), userId, ...owner });
  await store.appendMessages(session.id, 'main', makeMessages(1, 4), owner);
  await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } }, owner);
  await store.appendMessages(session.id, 'alt', makeMessages(3, 1), owner);
  const [older, newest] = makeCheckpointChain(session.id, 2) as [Checkpoint, Checkpoint];
  await store.saveCheckpoint(older, owner);
  await store.saveCheckpoint(newest, owner);
  await store.putPendingWrites(session.id, 'main', newest.id, [makePendingWrite('call-1')], owner);
  const episode = makeEpisode({ sessionId: session.id, userId, ...owner });
  await store.saveEpisode(episode);
  return { session, older, newest, episode };
}

/** Everything the owner can see of the session, to compare before and after an intruder's calls. */
async function ownerView(store: Store, sessionId: string, episodeId: string, owner: TenantScope) {
  return {
    session: await store.getSession(sessionId, owner),
    branches: await store.listBranches(sessionId, owner),
    main: await store.readMessages(sessionId, 'main', owner),
    alt: await store.readMessages(sessionId, 'alt', owner),
    checkpoints: await store.listCheckpoints(sessionId, 'main', owner),
    newest: await store.loadCheckpoint(sessionId, 'main', undefined, owner),
    episode: await store.getEpisode(episodeId, owner),
  };
}

/**
 * Tenant isolation: a call scoped to another tenant, or to no tenant, can neither read, list, fork,
 * load a checkpoint of, prune, append to, nor delete a tenant's data; each such call behaves as if
 * the session did not exist, and the owner's data is unchanged afterwards.
 */
export function describeTenancyConformance(context: ConformanceContext): void {
  describe('tenant isolation', () => {
    const intruders: [string, () => TenantScope, () => TenantScope][] = [
      ['another tenant', () => ({ tenantId: uniqueId('t') }), () => ({ tenantId: uniqueId('t') })],
      ['a call without a tenant', () => ({ tenantId: uniqueId('t') }), () => ({})],
      ['a tenant, on a session without one', () => ({}), () => ({ tenantId: uniqueId('t') })],
    ];
    for (const [name, ownerScope, intruderScope] of intruders) {
      it(`gives ${name} nothing of a session: every call is refused as if it did not exist, and nothing changes`, async () => {
        const { store } = context;
        const owner = ownerScope();
        const intruder = intruderScope();
        const { session, older, newest, episode } = await ownedSession(store, owner);
        const before = await ownerView(store, session.id, episode.id, owner);
        expect(before.main).toHaveLength(4);
        expect(before.newest?.pendingWrites).toHaveLength(1);

        const id = session.id;
        const notFound: [string, () => Promise<unknown>][] = [
          ['readMessages', () => store.readMessages(id, 'main', intruder)],
          ['readMessages of a fork', () => store.readMessages(id, 'alt', { ...intruder, fromSeq: 1 })],
          ['appendMessages', () => store.appendMessages(id, 'main', makeMessages(5, 1), intruder)],
          ['listBranches', () => store.listBranches(id, intruder)],
          [
            'forkBranch',
            () => store.forkBranch(id, { branchId: 'stolen', parent: { branchId: 'main', atSeq: 2 } }, intruder),
          ],
          [
            'updateBranch',
            () => store.updateBranch(id, 'main', { state: { hijacked: true } }, { expectedVersion: 1, ...intruder }),
          ],
          ['deleteBranch', () => store.deleteBranch(id, 'alt', intruder)],
          [
            'updateSession',
            () => store.updateSession(id, { state: { hijacked: true } }, { expectedVersion: 1, ...intruder }),
          ],
          ['loadCheckpoint (newest)', () => store.loadCheckpoint(id, 'main', undefined, intruder)],
          ['loadCheckpoint (by id)', () => store.loadCheckpoint(id, 'main', older.id, intruder)],
          ['listCheckpoints', () => store.listCheckpoints(id, 'main', intruder)],
          ['saveCheckpoint', () => store.saveCheckpoint(makeCheckpointChain(id, 1)[0]!, intruder)],
          [
            'putPendingWrites',
            () => store.putPendingWrites(id, 'main', newest.id, [makePendingWrite('call-2')], intruder),
          ],
          ['pruneCheckpoints', () => store.pruneCheckpoints(id, 'main', { last: 1 }, intruder)],
          ['deleteCheckpoint', () => store.deleteCheckpoint(id, 'main', older.id, intruder)],
        ];
        for (const [call, run] of notFound) {
          await expect(run(), `${call} must throw NotFoundError`).rejects.toBeInstanceOf(NotFoundError);
        }
        expect(await store.getSession(id, intruder)).toBeUndefined();
        expect(await store.getBranch(id, 'main', intruder)).toBeUndefined();
        expect(await store.getEpisode(episode.id, intruder)).toBeUndefined();
        expect(await store.deleteEpisode(episode.id, intruder)).toBe(false);
        expect(await store.deleteSession(id, intruder)).toBe(false);
        expect(await store.eraseUser({ ...intruder, userId: session.userId! })).toEqual({
          sessions: 0,
          branches: 0,
          messages: 0,
          checkpoints: 0,
          episodes: 0,
          assets: 0,
        });

        expect(await ownerView(store, id, episode.id, owner)).toEqual(before);
      });
    }

    it('refuses an unsafe tenant id in a scope with InvalidIdError, whether or not the session exists, changing nothing', async () => {
      const { store } = context;
      const owner = { tenantId: uniqueId('t') };
      const { session, older, episode } = await ownedSession(store, owner);
      const before = await ownerView(store, session.id, episode.id, owner);
      for (const bad of BAD_IDS) {
        const scope = { tenantId: bad };
        for (const id of [session.id, uniqueId('missing')]) {
          const calls: [string, () => Promise<unknown>][] = [
            ['getSession', () => store.getSession(id, scope)],
            ['deleteSession', () => store.deleteSession(id, scope)],
            ['getBranch', () => store.getBranch(id, 'main', scope)],
            ['listBranches', () => store.listBranches(id, scope)],
            ['readMessages', () => store.readMessages(id, 'main', scope)],
            ['appendMessages', () => store.appendMessages(id, 'main', makeMessages(5, 1), scope)],
            ['loadCheckpoint', () => store.loadCheckpoint(id, 'main', undefined, scope)],
            ['deleteCheckpoint', () => store.deleteCheckpoint(id, 'main', older.id, scope)],
            ['getEpisode', () => store.getEpisode(id === session.id ? episode.id : id, scope)],
            ['deleteEpisode', () => store.deleteEpisode(id === session.id ? episode.id : id, scope)],
            ['eraseUser', () => store.eraseUser({ ...scope, userId: session.userId! })],
          ];
          for (const [call, run] of calls) {
            await expect(
              run(),
              `${call} with tenant ${JSON.stringify(bad)} must throw InvalidIdError`,
            ).rejects.toBeInstanceOf(InvalidIdError);
          }
        }
      }
      expect(await ownerView(store, session.id, episode.id, owner)).toEqual(before);
    });
  });
}
