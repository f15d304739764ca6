/**
 * How the conformance suite damages a stored checkpoint, for stores that keep documents a disk
 * fault or a hand edit can break (FileStore, MongoStore; InMemoryStore keeps validated objects).
 * Each store's run supplies a {@link DamageCheckpoint} that rewrites the stored document in place.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sealLogRecord } from '../support/sealLogRecord.js';

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

/**
 * A {@link DamageCheckpoint} for a `FileStore` rooted at `directory`: in the session log, the
 * checkpoint's document is replaced by its damaged text (a JSON string when the damage leaves no
 * JSON), the log line itself stays whole. The log is rewritten by rename, as the store replaces it.
 */
export function damageFileCheckpoint(directory: string): DamageCheckpoint {
  return async (sessionId, branchId, checkpointId, damage) => {
    const file = join(directory, 'sessions', sessionId, 'log.jsonl');
    const [header, ...lines] = (await readFile(file, 'utf8')).trimEnd().split('\n');
    let found = false;
    const damaged = lines.map((line) => {
      const record = JSON.parse(line) as { ops: { op: string; branchId?: string; id?: string; checkpoint?: unknown }[] };
      for (const op of record.ops) {
        if (op.op !== 'checkpoint' || op.branchId !== branchId || op.id !== checkpointId) continue;
        found = true;
        const text = damagedText(JSON.stringify(op.checkpoint), damage);
        op.checkpoint = damage === 'truncated' || damage === 'garbage' ? text : JSON.parse(text);
      }
      // Sealed again: a damaged document inside a whole record (a damaged record is another test's).
      return sealLogRecord(JSON.stringify({ ops: record.ops }));
    });
    if (!found) throw new Error(`No checkpoint ${checkpointId} of branch ${branchId} in ${file}.`);
    await writeFile(`${file}.damaged`, `${[header, ...damaged].join('\n')}\n`);
    await rename(`${file}.damaged`, file);
  };
}
