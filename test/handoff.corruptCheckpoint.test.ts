/**
 * The documented recovery from a damaged checkpoint, through the handoff public API, on FileStore
 * and MongoStore (the run's FerretDB): the newest checkpoint of a session is damaged on disk or in
 * the database (a torn write, a future schema); opening the session refuses it with
 * CheckpointCorruptError (a future schema: UnsupportedSchemaVersionError), and opening at an older checkpoint, `session.restore(older)`, listing
 * checkpoints and the pruning at turn end all work, so the conversation goes on without anyone
 * deleting a file by hand.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointCorruptError, FileStore, type Store, UnsupportedSchemaVersionError } from '@baton/core';
import { HandoffBuilder } from '@baton/handoff';
import { MongoStore } from '@baton/store-mongo';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, deskAgents, ofType } from '../packages/handoff/test/support/helpers.js';
import { damageMongoCheckpoint } from '../packages/store-mongo/test/damageCheckpoint.js';
import { dropDatabase } from '../packages/store-mongo/test/testStore.js';
import { type CheckpointDamage, type DamageCheckpoint, damageFileCheckpoint } from './conformance/checkpointDamage.js';
import { testDatabaseName } from './support/mongoServer.js';
import { mongoTestUrl } from './support/mongoTestUrl.js';

interface StoreUnderTest {
  store: Store;
  damage: DamageCheckpoint;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const stores: [string, () => Promise<StoreUnderTest>][] = [
  [
    'FileStore',
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'baton-corrupt-checkpoint-'));
      const store = new FileStore({ directory });
      cleanups.push(async () => {
        await store.close();
        await rm(directory, { recursive: true, force: true });
      });
      return { store, damage: damageFileCheckpoint(directory) };
    },
  ],
  [
    'MongoStore',
    async () => {
      const url = mongoTestUrl();
      const dbName = testDatabaseName('corrupt_checkpoint');
      const store = new MongoStore({ url }, { dbName });
      cleanups.push(async () => {
        await store.close();
        await dropDatabase(url, dbName);
      });
      return { store, damage: damageMongoCheckpoint(url, dbName) };
    },
  ],
];

/** A fresh "process": new agents and a new workflow over the store, keeping the last 2 checkpoints. */
function desk(store: Store) {
  const { triage, billing } = deskAgents();
  return new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .checkpoints({ keep: { last: 2 } })
    .store(store)
    .build();
}

describe.each(stores)('a damaged newest checkpoint on %s', (_name, open) => {
  for (const damage of ['truncated', 'futureSchema'] as CheckpointDamage[]) {
    it(`(${damage}) is refused on open; opening at an older checkpoint, restore, the manifest and pruning all recover`, async () => {
      const { store, damage: damageCheckpoint } = await open();
      const id = `corrupt-${damage}-${Date.now()}`;
      const first = await desk(store).session({ id, userId: 'u-1' });
      for (const text of ['one', 'two', 'three'])
        expect((await collect(first.send(text))).at(-1)?.type).toBe('turn.completed');
      const before = await first.checkpoints();
      expect(before.length).toBeGreaterThanOrEqual(2);
      const newest = before.at(-1)!;
      const older = before.at(-2)!;
      await damageCheckpoint(id, 'main', newest.id, damage);

      // A checkpoint of a newer format is refused by name: never misread as an older one.
      await expect(desk(store).session({ id })).rejects.toBeInstanceOf(
        damage === 'futureSchema' ? UnsupportedSchemaVersionError : CheckpointCorruptError,
      );

      const recovered = await desk(store).session({ id, checkpointId: older.id });
      expect(recovered.routingState).toBe('idle');
      const listed = await recovered.checkpoints();
      // Opening at `older` replays the turn after it and saves that as the newest checkpoint; the damaged one is left out or listed as it was.
      const others = listed.filter((c) => c.id !== newest.id);
      expect(others.slice(0, -1)).toEqual(before.slice(0, -1));
      expect(others.at(-1)).toMatchObject({ parentId: older.id, throughSeq: newest.throughSeq });
      await recovered.restore(older.id);
      expect((await recovered.checkpoints()).at(-1)).toMatchObject({
        parentId: older.id,
        throughSeq: newest.throughSeq,
      });

      for (const text of ['four', 'five', 'six']) {
        const events = await collect(recovered.send(text));
        expect(events.at(-1)?.type).toBe('turn.completed');
        expect(ofType(events, 'error')).toEqual([]);
      }
      // Pruning at turn end went past the damaged checkpoint and deleted it with the other old ones.
      const after = await recovered.checkpoints();
      expect(after.length).toBeLessThanOrEqual(3);
      expect(after.map((c) => c.id)).not.toContain(newest.id);
      await expect(store.loadCheckpoint(id, 'main', newest.id)).resolves.toBeUndefined();

      const reopened = await desk(store).session({ id });
      expect(reopened.routingState).toBe('idle');
      const messages = await store.readMessages(id, 'main');
      expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
        'one',
        'two',
        'three',
        'four',
        'five',
        'six',
      ]);
      expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
      expect(danglingToolCalls(messages)).toEqual([]);
    });
  }
});
