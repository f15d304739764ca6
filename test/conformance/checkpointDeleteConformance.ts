import { type Checkpoint, CheckpointInUseError, NotFoundError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { type ConformanceContext, createSessionWithMessages } from './conformanceContext.js';
import { makeCheckpointChain, makePendingWrite, uniqueId } from './fixtures.js';

/** Deleting checkpoints by id: older ones go with their pending writes; the newest (a paused turn's) is refused. */
export function describeCheckpointDeleteConformance(context: ConformanceContext): void {
  describe('deleting a checkpoint by id', () => {
    it('deletes an older checkpoint with its pending writes and keeps the others', async () => {
      const { store } = context;
      const scope = { tenantId: uniqueId('t') };
      const { session } = await createSessionWithMessages(store, 6, scope);
      const [first, second, third] = makeCheckpointChain(session.id, 3) as [Checkpoint, Checkpoint, Checkpoint];
      for (const checkpoint of [first, second, third]) await store.saveCheckpoint(checkpoint, scope);
      await store.putPendingWrites(session.id, 'main', second.id, [makePendingWrite('call-1')], scope);

      expect(await store.deleteCheckpoint(session.id, 'main', second.id, scope)).toBe(true);
      expect((await store.listCheckpoints(session.id, 'main', scope)).map((c) => c.id)).toEqual([first.id, third.id]);
      expect(await store.loadCheckpoint(session.id, 'main', second.id, scope)).toBeUndefined();
      expect(await store.loadCheckpoint(session.id, 'main', first.id, scope)).toEqual(first);
      expect(await store.deleteCheckpoint(session.id, 'main', second.id, scope)).toBe(false);
      expect(await store.deleteCheckpoint(session.id, 'main', uniqueId('cp'), scope)).toBe(false);
    });

    it("refuses to delete a branch's newest checkpoint with CheckpointInUseError, keeping it and its pending writes", async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 4);
      const [older, paused] = makeCheckpointChain(session.id, 2) as [Checkpoint, Checkpoint];
      await store.saveCheckpoint(older);
      await store.saveCheckpoint(paused);
      const write = makePendingWrite('call-finished');
      await store.putPendingWrites(session.id, 'main', paused.id, [write]);

      const refused = await store.deleteCheckpoint(session.id, 'main', paused.id).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(CheckpointInUseError);
      expect(refused).toMatchObject({ code: 'CHECKPOINT_IN_USE', checkpointId: paused.id, branchId: 'main' });
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual({ ...paused, pendingWrites: [write] });
      expect(await store.deleteCheckpoint(session.id, 'main', older.id)).toBe(true);
      await expect(store.deleteCheckpoint(session.id, 'main', paused.id)).rejects.toBeInstanceOf(CheckpointInUseError);
    });

    it('throws NotFoundError for a missing session or branch', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 2);
      await expect(store.deleteCheckpoint(uniqueId('missing'), 'main', uniqueId('cp'))).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(store.deleteCheckpoint(session.id, 'nowhere', uniqueId('cp'))).rejects.toBeInstanceOf(NotFoundError);
    });
  });
}
