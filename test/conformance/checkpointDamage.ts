/**
 * How the conformance suite damages a stored checkpoint, for stores that keep documents a disk
 * fault or a hand edit can break (FileStore, MongoStore; InMemoryStore keeps validated objects).
 * Each store's run supplies a {@link DamageCheckpoint} that rewrites the stored document in place.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The kinds of damage: a cut-off write, bytes that are not JSON, JSON of the wrong shape, a future format. */
export const CHECKPOINT_DAMAGE = ['truncated', 'garbage', 'wrongShape', 'futureSchema'] as const;
/** One of {@link CHECKPOINT_DAMAGE}. */
export type CheckpointDamage = (typeof CHECKPOINT_DAMAGE)[number];

/** Rewrites the stored checkpoint `checkpointId` of a branch with `damage`. */
export type DamageCheckpoint = (sessionId: string, branchId: string, checkpointId: string, damage: CheckpointDamage) => Promise<void>;

/**
 * The damaged text of a stored checkpoint document (its JSON text as stored).
 * - `truncated`: the first half of the text (a torn write)
 * - `garbage`: bytes that are not JSON
 * - `wrongShape`: valid JSON, every field present, but `pendingRequests` is a string and `step` negative
 * - `futureSchema`: a valid document of `schemaVersion: 999`
 */
export function damagedText(stored: string, damage: CheckpointDamage): string {
  switch (damage) {
    case 'truncated':
      return stored.slice(0, Math.floor(stored.length / 2));
    case 'garbage':
      return '\u0000\u0007 not json {{{';
    case 'wrongShape':
      return JSON.stringify({ ...JSON.parse(stored), pendingRequests: 'none', step: -1 });
    case 'futureSchema':
      return JSON.stringify({ ...JSON.parse(stored), schemaVersion: 999 });
  }
}

/** A {@link DamageCheckpoint} for a `FileStore` rooted at `directory` (it rewrites `<order>-<id>.json`). */
export function damageFileCheckpoint(directory: string): DamageCheckpoint {
  return async (sessionId, branchId, checkpointId, damage) => {
    const dir = join(directory, 'sessions', sessionId, 'checkpoints', branchId);
    const name = (await readdir(dir)).find((n) => n.endsWith(`-${checkpointId}.json`));
    if (name === undefined) throw new Error(`No file of checkpoint ${checkpointId} in ${dir}.`);
    const file = join(dir, name);
    await writeFile(file, damagedText(await readFile(file, 'utf8'), damage));
  };
}
