/**
 * A branch's checkpoints as files: each checkpoint an immutable JSON document named
 * `<000000000001>-<checkpointId>.json` (the number is the save order, so names sort oldest first),
 * its pending writes in `<same name>.pending.jsonl`, appended one line per tool result.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import { CheckpointCorruptError, StoreError } from '../../errors.js';
import { isValidId } from '../../ids.js';
import { fsyncDir, hasErrorCode, mkdirDurable, readDirNames, readTextIfPresent, writeFileAtomic } from './fileIo.js';
import { appendJsonLines, readJsonLines } from './jsonLines.js';
import { parseStoredCheckpoint, parseStoredPendingWrite } from '../storedDocuments.js';

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
    files.push({ order: Number(match[1]), id: match[2], file: join(dir, name), pendingFile: join(dir, `${stem}.pending.jsonl`) });
  }
  return files.sort((a, b) => a.order - b.order);
}

/**
 * Reads a checkpoint document (without its appended pending writes).
 * @returns `undefined` when the file is gone (deleted by a concurrent prune)
 * @throws {CheckpointCorruptError} naming the file when it is not JSON, fails the schema, or
 *   belongs to another session, branch or id
 */
export async function readCheckpointDocument(entry: CheckpointFile, sessionId: string, branchId: string): Promise<Checkpoint | undefined> {
  const text = await readTextIfPresent(entry.file);
  if (text === undefined) return undefined;
  const checkpoint = parseStoredCheckpoint(text, entry.file);
  if (checkpoint.id !== entry.id || checkpoint.sessionId !== sessionId || checkpoint.branchId !== branchId) {
    throw new CheckpointCorruptError(
      `The checkpoint file ${entry.file} holds checkpoint ${JSON.stringify(checkpoint.id)} of session ${JSON.stringify(checkpoint.sessionId)}, branch ${JSON.stringify(checkpoint.branchId)}; it was not loaded. Move it back where it belongs or delete it.`,
    );
  }
  return checkpoint;
}

/** The manifest fields of a checkpoint document, and where it belongs; the rest of the document is not looked at. */
const ManifestFieldsSchema = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  sessionId: z.string(),
  branchId: z.string(),
  step: z.number().int().nonnegative(),
  throughSeq: z.number().int().nonnegative(),
  createdAt: z.string(),
});

/** A checkpoint file as the manifest and retention see it. */
export interface CheckpointFileManifest {
  entry: CheckpointFile;
  /** The manifest entry; `undefined` when the file is damaged so that its manifest fields cannot be read. */
  manifest: CheckpointManifestEntry | undefined;
  /** `manifest.createdAt`, or for a damaged file its modification time (the file is written once). */
  createdAt: string;
}

/**
 * Reads a checkpoint file's manifest fields without validating the rest of the document, so a
 * damaged checkpoint never blocks the manifest or pruning of the others (it throws
 * `CheckpointCorruptError` only when it is loaded).
 * @returns `undefined` when the file is gone (deleted by a concurrent prune)
 */
export async function readCheckpointManifest(entry: CheckpointFile, sessionId: string, branchId: string): Promise<CheckpointFileManifest | undefined> {
  const text = await readTextIfPresent(entry.file);
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const parsed = ManifestFieldsSchema.safeParse(data);
  if (parsed.success && parsed.data.id === entry.id && parsed.data.sessionId === sessionId && parsed.data.branchId === branchId) {
    const { id, parentId, step, throughSeq, createdAt } = parsed.data;
    return { entry, manifest: { id, parentId, step, throughSeq, createdAt }, createdAt };
  }
  try {
    return { entry, manifest: undefined, createdAt: (await stat(entry.file)).mtime.toISOString() };
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/** Parses one pending-write line, as strictly as `putPendingWrites` checks it. */
const parsePendingWrite = (value: unknown, document: string): PendingWrite => parseStoredPendingWrite(value, document);

/**
 * The pending writes appended to a checkpoint (a torn last line is ignored).
 * @throws {CheckpointCorruptError} when a complete line is damaged
 */
async function readAppendedWrites(entry: CheckpointFile): Promise<PendingWrite[]> {
  try {
    return (await readJsonLines(entry.pendingFile, parsePendingWrite)).records;
  } catch (error) {
    if (error instanceof StoreError) throw new CheckpointCorruptError(error.message, { cause: error });
    throw error;
  }
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

/**
 * A checkpoint with its appended pending writes.
 * @returns `undefined` when the file is gone
 * @throws {CheckpointCorruptError} when the document or a pending write is damaged
 */
export async function loadCheckpointFile(entry: CheckpointFile, sessionId: string, branchId: string): Promise<Checkpoint | undefined> {
  const checkpoint = await readCheckpointDocument(entry, sessionId, branchId);
  if (checkpoint === undefined) return undefined;
  return { ...checkpoint, pendingWrites: mergePendingWrites(checkpoint.pendingWrites, await readAppendedWrites(entry)) };
}

/**
 * Saves a checkpoint document unless one with its id exists. The caller holds the session lock.
 * @returns whether it was written
 */
export async function saveCheckpointFile(dir: string, checkpoint: Checkpoint): Promise<boolean> {
  const existing = await listCheckpointFiles(dir);
  if (existing.some((entry) => entry.id === checkpoint.id)) return false;
  const order = (existing.at(-1)?.order ?? 0) + 1;
  await mkdirDurable(dir);
  await writeFileAtomic(join(dir, `${String(order).padStart(12, '0')}-${checkpoint.id}.json`), JSON.stringify(checkpoint));
  return true;
}

/**
 * Appends the writes whose `toolCallId` the checkpoint does not hold yet, flushed with fsync. The
 * caller holds the session lock.
 */
export async function appendPendingWriteLines(entry: CheckpointFile, checkpoint: Checkpoint, writes: readonly PendingWrite[]): Promise<void> {
  const stored = mergePendingWrites(checkpoint.pendingWrites, await readAppendedWrites(entry));
  const fresh = mergePendingWrites(stored, writes).slice(stored.length);
  if (fresh.length === 0) return;
  await appendJsonLines(entry.pendingFile, parsePendingWrite, undefined, () => fresh);
}

/** Deletes a checkpoint's document, then its pending writes. The caller holds the session lock. */
export async function deleteCheckpointFiles(entries: readonly CheckpointFile[], dir: string): Promise<void> {
  if (entries.length === 0) return;
  for (const entry of entries) {
    await rm(entry.file, { force: true });
    await rm(entry.pendingFile, { force: true });
  }
  await fsyncDir(dir);
}
