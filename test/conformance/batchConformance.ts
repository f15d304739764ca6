import { ConcurrencyError, InvalidInputError, NotFoundError, writeStoreBatch } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { type ConformanceContext, createSessionWithMessages } from './conformanceContext.js';
import { makeCheckpoint, makeCheckpointChain, makeMessages, uniqueId } from './fixtures.js';

/**
 * One durability point's writes (`writeStoreBatch`: the store's `writeBatch` when it has one, else
 * the separate calls): stored together, read back as the separate calls would store them; a store
 * with `writeBatch` stores nothing of a refused batch.
 */
export function describeBatchConformance(context: ConformanceContext): void {
  describe('batches of a durability point', () => {
    it('stores messages, branch state, the session change and a checkpoint, and returns the new documents', async () => {
      const { store } = context;
      const scope = { tenantId: uniqueId('t') };
      const { session } = await createSessionWithMessages(store, 2, scope);
      const checkpoint = makeCheckpoint({ sessionId: session.id, throughSeq: 4 });
      const result = await writeStoreBatch(store, {
        sessionId: session.id,
        branchId: 'main',
        ...scope,
        messages: makeMessages(1, 4).slice(2), // seqs 3 and 4
        branch: { state: { plan: 'b' }, expectedVersion: 1 },
        session: { change: { state: { verified: true } }, expectedVersion: session.version },
        checkpoint,
      });
      expect(result).toMatchObject({
        inserted: 2,
        session: { version: session.version + 1, state: { verified: true } },
        branch: { version: 2, state: { plan: 'b' } },
      });
      expect((await store.readMessages(session.id, 'main', scope)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
      expect(await store.getSession(session.id, scope)).toEqual(result.session);
      expect(await store.getBranch(session.id, 'main', scope)).toEqual(result.branch);
      expect(await store.loadCheckpoint(session.id, 'main', undefined, scope)).toEqual(checkpoint);
    });

    it('refuses a missing session for the tenant, and a checkpoint of another branch', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 0);
      await expect(
        writeStoreBatch(store, {
          sessionId: session.id,
          branchId: 'main',
          tenantId: 'other',
          messages: makeMessages(1, 1),
        }),
      ).rejects.toBeInstanceOf(NotFoundError);
      const elsewhere = makeCheckpoint({ sessionId: session.id, branchId: 'alt' });
      await expect(
        writeStoreBatch(store, { sessionId: session.id, branchId: 'main', checkpoint: elsewhere }),
      ).rejects.toBeInstanceOf(InvalidInputError);
      expect(await store.readMessages(session.id, 'main')).toEqual([]);
    });

    it('stores nothing of a stale batch with writeBatch; the separate calls keep what came before the failure', async () => {
      const { store } = context;
      const atomic = typeof store.writeBatch === 'function';
      const { session } = await createSessionWithMessages(store, 2);
      const refused = writeStoreBatch(store, {
        sessionId: session.id,
        branchId: 'main',
        messages: makeMessages(1, 3).slice(2),
        session: { change: { state: { x: 1 } }, expectedVersion: session.version + 7 },
        checkpoint: makeCheckpoint({ sessionId: session.id }),
      });
      await expect(refused).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.readMessages(session.id, 'main')).toHaveLength(atomic ? 2 : 3);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([]);
      expect(await store.getSession(session.id)).toEqual(session);
    });

    it("prunes the branch's old checkpoints after the batch's own, in the same batch, and keeps what the retention keeps", async () => {
      const { store } = context;
      const scope = { tenantId: uniqueId('t') };
      const { session } = await createSessionWithMessages(store, 4, scope);
      const [first, second, third, fourth] = makeCheckpointChain(session.id, 4);
      for (const checkpoint of [first!, second!, third!]) await store.saveCheckpoint(checkpoint, scope);
      const result = await writeStoreBatch(store, {
        sessionId: session.id,
        branchId: 'main',
        ...scope,
        messages: makeMessages(1, 5).slice(4),
        checkpoint: fourth!,
        pruneCheckpoints: { last: 2 },
      });
      expect(result).toMatchObject({ inserted: 1, pruned: 2 });
      expect((await store.listCheckpoints(session.id, 'main', scope)).map((c) => c.id)).toEqual([
        third!.id,
        fourth!.id,
      ]);
      // Without a checkpoint of its own, a batch prunes what is stored; the newest always stays.
      const alone = await writeStoreBatch(store, {
        sessionId: session.id,
        branchId: 'main',
        ...scope,
        session: { change: { state: { pruned: true } }, expectedVersion: session.version },
        pruneCheckpoints: { last: 1 },
      });
      expect(alone.pruned).toBe(1);
      expect((await store.listCheckpoints(session.id, 'main', scope)).map((c) => c.id)).toEqual([fourth!.id]);
      expect(await store.loadCheckpoint(session.id, 'main', undefined, scope)).toEqual(fourth);
      expect((await store.readMessages(session.id, 'main', scope)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    });
  });
}
