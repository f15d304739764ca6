import {
  type Checkpoint,
  CheckpointCorruptError,
  type CheckpointManifestEntry,
  UnsupportedSchemaVersionError,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_DAMAGE, DAMAGED_FIELD, type DamageCheckpoint } from './checkpointDamage.js';
import { type ConformanceContext, createSessionWithMessages } from './conformanceContext.js';
import { makeCheckpointChain, makePendingWrite } from './fixtures.js';

const manifest = (c: Checkpoint): CheckpointManifestEntry => ({
  id: c.id,
  parentId: c.parentId,
  step: c.step,
  throughSeq: c.throughSeq,
  createdAt: c.createdAt,
});

/**
 * The manifest without the damaged checkpoint, after checking how the damaged one appears in it:
 * left out when its manifest fields cannot be read, or listed with its true manifest fields.
 */
function withoutDamaged(listed: CheckpointManifestEntry[], damaged: Checkpoint): CheckpointManifestEntry[] {
  const entry = listed.find((e) => e.id === damaged.id);
  if (entry !== undefined) expect(entry).toEqual(manifest(damaged));
  return listed.filter((e) => e.id !== damaged.id);
}

function damager(context: ConformanceContext): DamageCheckpoint {
  const damage = context.damageCheckpoint;
  if (damage === undefined) throw new Error('This store run is declared damageable but returned no damageCheckpoint.');
  return damage;
}

/**
 * Damaged checkpoints (a torn write, garbage, the wrong shape, a future schema, a value a save
 * refuses): the damaged one
 * throws `CheckpointCorruptError` (a future schema: `UnsupportedSchemaVersionError`) when it is the one loaded, and blocks nothing else — loading an
 * older one, listing the manifest, pruning.
 */
export function describeCheckpointDamageConformance(context: ConformanceContext): void {
  describe('damaged checkpoints', () => {
    for (const damage of CHECKPOINT_DAMAGE) {
      const refusal = damage === 'futureSchema' ? UnsupportedSchemaVersionError : CheckpointCorruptError;
      it(`a damaged newest checkpoint (${damage}) throws ${refusal.name} when loaded, but older ones load and the manifest lists`, async () => {
        const { store } = context;
        const { session } = await createSessionWithMessages(store, 8);
        const chain = makeCheckpointChain(session.id, 4);
        for (const checkpoint of chain) await store.saveCheckpoint(checkpoint);
        const [first, , third, newest] = chain as [Checkpoint, Checkpoint, Checkpoint, Checkpoint];
        await damager(context)(session.id, 'main', newest.id, damage);

        await expect(store.loadCheckpoint(session.id, 'main')).rejects.toBeInstanceOf(refusal);
        await expect(store.loadCheckpoint(session.id, 'main', newest.id)).rejects.toBeInstanceOf(refusal);
        // A value a save refuses is refused on read too, naming its field.
        const field = DAMAGED_FIELD[damage];
        if (field !== undefined) await expect(store.loadCheckpoint(session.id, 'main')).rejects.toThrow(field);
        expect(await store.loadCheckpoint(session.id, 'main', third.id)).toEqual(third);
        expect(await store.loadCheckpoint(session.id, 'main', first.id)).toEqual(first);
        expect(withoutDamaged(await store.listCheckpoints(session.id, 'main'), newest)).toEqual(
          chain.slice(0, 3).map(manifest),
        );
      });

      it(`an older damaged checkpoint (${damage}) blocks neither the newest, nor the manifest, nor pruning, which may delete it`, async () => {
        const { store } = context;
        const { session } = await createSessionWithMessages(store, 10);
        const chain = makeCheckpointChain(session.id, 5);
        for (const checkpoint of chain) await store.saveCheckpoint(checkpoint);
        const [first, second, , fourth, newest] = chain as [Checkpoint, Checkpoint, Checkpoint, Checkpoint, Checkpoint];
        await damager(context)(session.id, 'main', second.id, damage);

        expect(await store.loadCheckpoint(session.id, 'main')).toEqual(newest);
        expect(await store.loadCheckpoint(session.id, 'main', first.id)).toEqual(first);
        await expect(store.loadCheckpoint(session.id, 'main', second.id)).rejects.toBeInstanceOf(refusal);
        expect(withoutDamaged(await store.listCheckpoints(session.id, 'main'), second)).toEqual(
          [first, ...chain.slice(2)].map(manifest),
        );
        const write = makePendingWrite('call-after-damage');
        await store.putPendingWrites(session.id, 'main', newest.id, [write]);

        expect(await store.pruneCheckpoints(session.id, 'main', { last: 2 })).toBe(3);
        expect(await store.listCheckpoints(session.id, 'main')).toEqual([fourth, newest].map(manifest));
        expect(await store.loadCheckpoint(session.id, 'main', second.id)).toBeUndefined();
        expect(await store.loadCheckpoint(session.id, 'main')).toEqual({ ...newest, pendingWrites: [write] });
      });
    }
  });
}
