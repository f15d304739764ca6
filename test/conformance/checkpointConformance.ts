import {
  type Checkpoint,
  CheckpointCorruptError,
  InvalidInputError,
  NotFoundError,
  type PendingWrite,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { type ConformanceContext, createSessionWithMessages, createTestSession } from './conformanceContext.js';
import { makeCheckpoint, makeCheckpointChain, makePendingWrite, uniqueId } from './fixtures.js';

const manifest = (c: Checkpoint) => ({
  id: c.id,
  parentId: c.parentId,
  step: c.step,
  throughSeq: c.throughSeq,
  createdAt: c.createdAt,
});

/** Checkpoints: save/load, pending writes, the manifest, retention. */
export function describeCheckpointConformance(context: ConformanceContext): void {
  describe('checkpoints', () => {
    it('saves checkpoints and loads the newest, or one by id', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 4);
      const [first, second] = makeCheckpointChain(session.id, 2);
      await store.saveCheckpoint(first!);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(first);
      await store.saveCheckpoint(second!);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(second);
      expect(await store.loadCheckpoint(session.id, 'main', first!.id)).toEqual(first);
    });

    it('loads undefined when the branch has no checkpoint or the id is unknown', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      expect(await store.loadCheckpoint(session.id, 'main')).toBeUndefined();
      await store.saveCheckpoint(makeCheckpoint({ sessionId: session.id }));
      expect(await store.loadCheckpoint(session.id, 'main', uniqueId('cp'))).toBeUndefined();
    });

    it('is idempotent by id: a second save of the same id keeps the first', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const checkpoint = makeCheckpoint({ sessionId: session.id, step: 1 });
      await store.saveCheckpoint(checkpoint);
      await store.saveCheckpoint({ ...checkpoint, step: 7 });
      await store.saveCheckpoint(checkpoint);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([manifest(checkpoint)]);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(checkpoint);
    });

    it('keeps checkpoints per branch', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 2);
      await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 1 } });
      const onMain = makeCheckpoint({ sessionId: session.id });
      await store.saveCheckpoint(onMain);
      expect(await store.loadCheckpoint(session.id, 'alt')).toBeUndefined();
      expect(await store.loadCheckpoint(session.id, 'alt', onMain.id)).toBeUndefined();
      const onAlt = makeCheckpoint({ sessionId: session.id, branchId: 'alt' });
      await store.saveCheckpoint(onAlt);
      expect(await store.loadCheckpoint(session.id, 'alt')).toEqual(onAlt);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(onMain);
    });

    it('refuses checkpoints of a missing session or branch', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      await expect(store.saveCheckpoint(makeCheckpoint({ sessionId: uniqueId('missing') }))).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(
        store.saveCheckpoint(makeCheckpoint({ sessionId: session.id, branchId: 'nope' })),
      ).rejects.toBeInstanceOf(NotFoundError);
    });

    it('refuses a checkpoint that fails its schema with CheckpointCorruptError, saving nothing', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const valid = makeCheckpoint({ sessionId: session.id });
      const bad: unknown[] = [
        { ...valid, step: -1 },
        { ...valid, schemaVersion: 999 },
        { ...valid, pendingRequests: 'none' },
        { ...valid, statePatches: undefined },
      ];
      for (const checkpoint of bad)
        await expect(store.saveCheckpoint(checkpoint as Checkpoint)).rejects.toBeInstanceOf(CheckpointCorruptError);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([]);
    });

    it('saves pending writes once per toolCallId and returns them with the checkpoint', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const carried = makePendingWrite('call-0');
      const checkpoint = makeCheckpoint({ sessionId: session.id, pendingWrites: [carried] });
      await store.saveCheckpoint(checkpoint);
      const a = makePendingWrite('call-1');
      const b = makePendingWrite('call-2', {
        isError: true,
        content: 'order not found',
        control: { kind: 'handoff', target: 'shipping' },
      });
      await store.putPendingWrites(session.id, 'main', checkpoint.id, [a]);
      await store.putPendingWrites(session.id, 'main', checkpoint.id, [a, b]);
      await store.putPendingWrites(session.id, 'main', checkpoint.id, [
        { ...a, content: 'a second run must not replace the first' },
        carried,
      ]);
      const loaded = await store.loadCheckpoint(session.id, 'main', checkpoint.id);
      expect(loaded?.pendingWrites).toEqual([carried, a, b]);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(loaded);
      expect(loaded).toEqual({ ...checkpoint, pendingWrites: [carried, a, b] });
    });

    it('refuses pending writes for a missing checkpoint or with a bad shape', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      await expect(
        store.putPendingWrites(session.id, 'main', uniqueId('cp'), [makePendingWrite('c')]),
      ).rejects.toBeInstanceOf(NotFoundError);
      const checkpoint = makeCheckpoint({ sessionId: session.id });
      await store.saveCheckpoint(checkpoint);
      const bad = { ...makePendingWrite('c'), durationMs: -5 } as PendingWrite;
      await expect(store.putPendingWrites(session.id, 'main', checkpoint.id, [bad])).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      expect((await store.loadCheckpoint(session.id, 'main'))?.pendingWrites).toEqual([]);
    });

    it('lists the manifest oldest first, with only id, parentId, step, throughSeq and createdAt', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const chain = makeCheckpointChain(session.id, 4);
      for (const checkpoint of chain) await store.saveCheckpoint(checkpoint);
      const listed = await store.listCheckpoints(session.id, 'main');
      expect(listed).toEqual(chain.map(manifest));
      for (const entry of listed)
        expect(Object.keys(entry).sort()).toEqual(['createdAt', 'id', 'parentId', 'step', 'throughSeq']);
    });

    it('prunes to the last N, keeping the newest', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const chain = makeCheckpointChain(session.id, 5);
      for (const checkpoint of chain) await store.saveCheckpoint(checkpoint);
      expect(await store.pruneCheckpoints(session.id, 'main', { last: 2 })).toBe(3);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual(chain.slice(3).map(manifest));
      expect(await store.loadCheckpoint(session.id, 'main', chain[0]!.id)).toBeUndefined();
      expect(await store.pruneCheckpoints(session.id, 'main', { last: 0 })).toBe(1);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([manifest(chain[4]!)]);
      expect(await store.pruneCheckpoints(session.id, 'main', { last: 0 })).toBe(0);
      expect(await store.loadCheckpoint(session.id, 'main')).toEqual(chain[4]);
    });

    it('prunes by age, always keeping the newest even when it is too old', async () => {
      const { store } = context;
      const session = await createTestSession(store);
      const old = makeCheckpointChain(session.id, 3, { endAgoMs: 3_600_000, spacingMs: 60_000 });
      const fresh = makeCheckpoint({ sessionId: session.id, step: 4, parentId: old[2]!.id });
      for (const checkpoint of [...old, fresh]) await store.saveCheckpoint(checkpoint);
      expect(await store.pruneCheckpoints(session.id, 'main', { maxAgeMs: 600_000 })).toBe(3);
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([manifest(fresh)]);

      const other = await createTestSession(store);
      const allOld = makeCheckpointChain(other.id, 3, { endAgoMs: 3_600_000 });
      for (const checkpoint of allOld) await store.saveCheckpoint(checkpoint);
      expect(await store.pruneCheckpoints(other.id, 'main', { maxAgeMs: 1000 })).toBe(2);
      expect(await store.listCheckpoints(other.id, 'main')).toEqual([manifest(allOld[2]!)]);
    });

    it('deletes checkpoints created before a date, within a tenant', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const { session } = await createSessionWithMessages(store, 2, { tenantId });
      await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } }, { tenantId });
      const otherScope = { tenantId: uniqueId('t') };
      const otherTenant = await createTestSession(store, otherScope);
      const at = (day: number) => `2001-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
      const oldMain = makeCheckpoint({ sessionId: session.id, createdAt: at(1) });
      const newMain = makeCheckpoint({ sessionId: session.id, createdAt: at(20), step: 2 });
      const oldAlt = makeCheckpoint({ sessionId: session.id, branchId: 'alt', createdAt: at(2) });
      const newestAlt = makeCheckpoint({ sessionId: session.id, branchId: 'alt', createdAt: at(3), step: 2 });
      const otherOld = makeCheckpoint({ sessionId: otherTenant.id, createdAt: at(1) });
      for (const checkpoint of [oldMain, newMain, oldAlt, newestAlt])
        await store.saveCheckpoint(checkpoint, { tenantId });
      await store.saveCheckpoint(otherOld, otherScope);

      expect(await store.deleteCheckpointsOlderThan(at(10), { tenantId })).toBe(2);
      expect(await store.listCheckpoints(session.id, 'main', { tenantId })).toEqual([manifest(newMain)]);
      expect(await store.listCheckpoints(session.id, 'alt', { tenantId })).toEqual([manifest(newestAlt)]);
      expect(await store.listCheckpoints(otherTenant.id, 'main', otherScope)).toEqual([manifest(otherOld)]);
    });

    it('never deletes the newest checkpoint of a branch by age, so a paused turn keeps its requests and pending writes', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const { session } = await createSessionWithMessages(store, 2, { tenantId });
      await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } }, { tenantId });
      const at = (day: number) => `2001-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
      const [older, paused] = makeCheckpointChain(session.id, 2, { endAgoMs: Date.now() - Date.parse(at(3)) });
      const onlyAlt = makeCheckpoint({ sessionId: session.id, branchId: 'alt', createdAt: at(1) });
      for (const checkpoint of [older!, paused!, onlyAlt]) await store.saveCheckpoint(checkpoint, { tenantId });
      const write = makePendingWrite('call-finished');
      await store.putPendingWrites(session.id, 'main', paused!.id, [write], { tenantId });

      expect(await store.deleteCheckpointsOlderThan(at(10), { tenantId })).toBe(1);
      expect(await store.listCheckpoints(session.id, 'main', { tenantId })).toEqual([manifest(paused!)]);
      expect(await store.loadCheckpoint(session.id, 'main', undefined, { tenantId })).toEqual({
        ...paused!,
        pendingWrites: [write],
      });
      expect(await store.loadCheckpoint(session.id, 'alt', undefined, { tenantId })).toEqual(onlyAlt);
      expect(await store.deleteCheckpointsOlderThan(at(10), { tenantId })).toBe(0);
    });
  });
}
