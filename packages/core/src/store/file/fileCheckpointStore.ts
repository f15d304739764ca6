import { join } from 'node:path';
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import { CheckpointCorruptError, NotFoundError } from '../../errors.js';
import { assertValidId } from '../../ids.js';
import {
  appendPendingWriteLines,
  type CheckpointFileManifest,
  deleteCheckpointFiles,
  listCheckpointFiles,
  loadCheckpointFile,
  readCheckpointDocument,
  readCheckpointManifest,
  saveCheckpointFile,
} from './checkpointFiles.js';
import type { FileDocuments } from './fileDocuments.js';
import { mapInBatches, readDirNames } from './fileIo.js';
import type { SessionLocks } from './sessionLock.js';
import type { CheckpointRetention, TenantScope } from '../store.js';
import { assertCheckpoint, assertPendingWrites, checkpointsToPrune, ensureCheckpointDeletable } from '../storeRules.js';

/**
 * The checkpoint half of `FileStore` (see `checkpointFiles.ts` for the file format). Writes hold
 * the session lock; reads take none and tolerate a concurrent prune. `FileStore` wraps each call's
 * I/O errors as `StoreError`.
 */
export class FileCheckpointStore {
  readonly #docs: FileDocuments;
  readonly #locks: SessionLocks;

  constructor(docs: FileDocuments, locks: SessionLocks) {
    this.#docs = docs;
    this.#locks = locks;
  }

  get #layout() {
    return this.#docs.layout;
  }

  /** Saves a checkpoint unless its id is stored already. */
  async save(checkpoint: Checkpoint, scope: TenantScope): Promise<void> {
    const valid = assertCheckpoint(checkpoint);
    await this.#locks.run(valid.sessionId, async () => {
      await this.#docs.requireBranch(valid.sessionId, valid.branchId, scope);
      await saveCheckpointFile(this.#layout.checkpointsDir(valid.sessionId, valid.branchId), valid);
    });
  }

  /** Appends the writes whose `toolCallId` the checkpoint does not hold yet. */
  async putPendingWrites(sessionId: string, branchId: string, checkpointId: string, writes: readonly PendingWrite[], scope: TenantScope): Promise<void> {
    const dir = this.#layout.checkpointsDir(sessionId, branchId);
    assertValidId('checkpoint', checkpointId);
    const valid = assertPendingWrites(writes);
    await this.#locks.run(sessionId, async () => {
      await this.#docs.requireBranch(sessionId, branchId, scope);
      const entry = (await listCheckpointFiles(dir)).find((e) => e.id === checkpointId);
      const document = entry && (await readCheckpointDocument(entry, sessionId, branchId));
      if (entry === undefined || document === undefined) throw new NotFoundError(`Checkpoint ${JSON.stringify(checkpointId)} does not exist.`);
      await appendPendingWriteLines(entry, document, valid);
    });
  }

  /** Checkpoint `id`, or the newest of the branch. */
  async load(sessionId: string, branchId: string, id: string | undefined, scope: TenantScope): Promise<Checkpoint | undefined> {
    const dir = this.#layout.checkpointsDir(sessionId, branchId);
    if (id !== undefined) assertValidId('checkpoint', id);
    await this.#docs.requireBranch(sessionId, branchId, scope);
    // A concurrent prune may delete the newest file between listing and reading: list again once.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const entries = await listCheckpointFiles(dir);
      const entry = id === undefined ? entries.at(-1) : entries.find((e) => e.id === id);
      if (entry === undefined) return undefined;
      const checkpoint = await loadCheckpointFile(entry, sessionId, branchId);
      if (checkpoint !== undefined || id !== undefined) return checkpoint;
    }
    return undefined;
  }

  /**
   * The manifest, oldest first, from each file's manifest fields only: a file whose manifest
   * fields cannot be read (not JSON, missing or bad fields, or naming another session, branch or
   * id) is left out; one whose other fields are
   * damaged is listed and throws `CheckpointCorruptError` when loaded.
   */
  async list(sessionId: string, branchId: string, scope: TenantScope): Promise<CheckpointManifestEntry[]> {
    const files = await this.#manifests(sessionId, branchId, scope);
    return files.flatMap((f) => (f.manifest === undefined ? [] : [f.manifest]));
  }

  /**
   * Deletes the checkpoints outside the retention (never the newest). Damaged files count too: by
   * their save order for `last`, by their modification time for `maxAgeMs`.
   */
  async prune(sessionId: string, branchId: string, retention: CheckpointRetention, scope: TenantScope): Promise<number> {
    const dir = this.#layout.checkpointsDir(sessionId, branchId);
    return this.#locks.run(sessionId, async () => {
      const files = await this.#manifests(sessionId, branchId, scope);
      const doomed = new Set(checkpointsToPrune(files.map((f) => ({ id: f.entry.id, createdAt: f.createdAt })), retention));
      await deleteCheckpointFiles(files.filter((f) => doomed.has(f.entry.id)).map((f) => f.entry), dir);
      return doomed.size;
    });
  }

  /** Deletes checkpoint `id` with its pending writes, unless it is the branch's newest file (a paused turn's). */
  async delete(sessionId: string, branchId: string, id: string, scope: TenantScope): Promise<boolean> {
    const dir = this.#layout.checkpointsDir(sessionId, branchId);
    assertValidId('checkpoint', id);
    return this.#locks.run(sessionId, async () => {
      await this.#docs.requireBranch(sessionId, branchId, scope);
      const entries = await listCheckpointFiles(dir);
      if (!ensureCheckpointDeletable(branchId, id, entries)) return false;
      await deleteCheckpointFiles(entries.filter((e) => e.id === id), dir);
      return true;
    });
  }

  /**
   * Deletes every checkpoint created before `before`, in every session of the tenant, except the
   * newest of each branch (a paused turn's). A damaged document is kept (its age is unknown).
   */
  async deleteOlderThan(before: string, scope: TenantScope): Promise<number> {
    let deleted = 0;
    for (const session of await this.#docs.allSessions()) {
      if (scope.tenantId !== undefined && session.tenantId !== scope.tenantId) continue;
      deleted += await this.#locks.run(session.id, async () => {
        let count = 0;
        const root = this.#layout.checkpointsRoot(session.id);
        for (const branchId of await readDirNames(root)) {
          const dir = join(root, branchId);
          const entries = (await listCheckpointFiles(dir)).slice(0, -1); // the newest stays
          const old = await mapInBatches(entries, async (entry) => {
            const checkpoint = await readCheckpointDocument(entry, session.id, branchId).catch((error: unknown) => {
              if (error instanceof CheckpointCorruptError) return undefined;
              throw error;
            });
            return checkpoint !== undefined && checkpoint.createdAt < before;
          });
          const doomed = entries.filter((_, index) => old[index]);
          await deleteCheckpointFiles(doomed, dir);
          count += doomed.length;
        }
        return count;
      });
    }
    return deleted;
  }

  /** The branch's checkpoint files with their manifest fields, oldest first (files deleted meanwhile left out). */
  async #manifests(sessionId: string, branchId: string, scope: TenantScope): Promise<CheckpointFileManifest[]> {
    const dir = this.#layout.checkpointsDir(sessionId, branchId);
    await this.#docs.requireBranch(sessionId, branchId, scope);
    const entries = await listCheckpointFiles(dir);
    const files = await mapInBatches(entries, (entry) => readCheckpointManifest(entry, sessionId, branchId));
    return files.filter((f): f is CheckpointFileManifest => f !== undefined);
  }
}
