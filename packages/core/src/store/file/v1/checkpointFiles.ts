/**
 * A branch's checkpoints as files in `FileStore` format version 1 (read for the migration to the
 * session log): each checkpoint an immutable JSON document named `<000000000001>-<checkpointId>.json`
 * (the number is the save order, so names sort oldest first), its pending writes in
 * `<same name>.pending.jsonl`, appended one line per tool result.
 */
import { join } from 'node:path';
import type { PendingWrite } from '../../../conversation/checkpoint.js';
import { isValidId } from '../../../ids.js';
import { readDirNames } from '../fileIo.js';

const NAME = /^(\d{12})-(.+)\.json$/;

/** One checkpoint's files. */
export interface CheckpointFile {
  /** The save order within the branch, from 1. */
  order: number;
  id: string;
  file: string;
  pendingFile: string;
}

/** The branch's checkpoint files, oldest first (by save order). */
export async function listCheckpointFiles(dir: string): Promise<CheckpointFile[]> {
  const files: CheckpointFile[] = [];
  for (const name of await readDirNames(dir)) {
    const match = NAME.exec(name);
    if (match === null || !isValidId(match[2])) continue;
    const stem = name.slice(0, -'.json'.length);
    files.push({
      order: Number(match[1]),
      id: match[2],
      file: join(dir, name),
      pendingFile: join(dir, `${stem}.pending.jsonl`),
    });
  }
  return files.sort((a, b) => a.order - b.order);
}

/** `base` followed by the writes of `extra` whose `toolCallId` is not there yet (first one wins). */
export function mergePendingWrites(base: readonly PendingWrite[], extra: readonly PendingWrite[]): PendingWrite[] {
  const seen = new Set(base.map((w) => w.toolCallId));
  const merged = [...base];
  for (const write of extra) {
    if (seen.has(write.toolCallId)) continue;
    seen.add(write.toolCallId);
    merged.push(write);
  }
  return merged;
}
