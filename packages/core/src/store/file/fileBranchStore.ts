import { rm, writeFile } from 'node:fs/promises';
import { ConcurrencyError, InvalidInputError } from '../../errors.js';
import type { Branch, BranchParent, State } from '../../conversation/session.js';
import { type FileDocuments, parseMessage } from './fileDocuments.js';
import { fsyncDir } from './fileIo.js';
import { readLastJsonLine } from './jsonLines.js';
import type { SessionLocks } from './sessionLock.js';
import type { TenantScope, UpdateOptions } from '../store.js';
import { assertBranchId, branchState, ensureBranchDeletable } from '../storeRules.js';

/**
 * The branch writes of `FileStore`: forks (a branch document plus an empty messages file; nothing
 * of the parent is copied), compare-and-set state updates, deletes. Each holds the session lock.
 * `FileStore` wraps each call's I/O errors as `StoreError`.
 */
export class FileBranchStore {
  readonly #docs: FileDocuments;
  readonly #locks: SessionLocks;

  constructor(docs: FileDocuments, locks: SessionLocks) {
    this.#docs = docs;
    this.#locks = locks;
  }

  get #layout() {
    return this.#docs.layout;
  }

  /** Creates a fork referring to the first `parent.atSeq` messages of its parent. */
  async fork(sessionId: string, input: { branchId: string; parent: BranchParent; state?: State }, scope: TenantScope): Promise<Branch> {
    const { branchId, parent } = input;
    this.#layout.branchFile(sessionId, branchId);
    assertBranchId(parent.branchId);
    const state = branchState(input.state ?? {});
    return this.#locks.run(sessionId, async () => {
      await this.#docs.requireSession(sessionId, scope);
      if ((await this.#docs.readBranch(sessionId, branchId)) !== undefined) throw new ConcurrencyError(`Branch ${JSON.stringify(branchId)} already exists.`);
      const from = await this.#docs.requireBranch(sessionId, parent.branchId, scope);
      const end = (await readLastJsonLine(this.#layout.messagesFile(sessionId, from.id), parseMessage))?.seq ?? from.parent?.atSeq ?? 0;
      if (parent.atSeq > end) {
        throw new InvalidInputError(`Cannot fork at seq ${parent.atSeq}: branch ${JSON.stringify(parent.branchId)} has ${end} messages.`);
      }
      await rm(this.#layout.checkpointsDir(sessionId, branchId), { recursive: true, force: true }); // left by a crashed delete
      await writeFile(this.#layout.messagesFile(sessionId, branchId), '');
      await fsyncDir(this.#layout.messagesDir(sessionId));
      const branch: Branch = {
        id: branchId,
        sessionId,
        parent: { branchId: parent.branchId, atSeq: parent.atSeq },
        createdAt: new Date().toISOString(),
        state,
        version: 1,
      };
      await this.#docs.writeBranch(branch);
      return branch;
    });
  }

  /** Replaces the branch's state if its version is `expectedVersion`. */
  async update(sessionId: string, branchId: string, change: { state: State }, options: UpdateOptions): Promise<Branch> {
    this.#layout.branchFile(sessionId, branchId);
    const state = branchState(change.state);
    return this.#locks.run(sessionId, async () => {
      const branch = await this.#docs.requireBranch(sessionId, branchId, options);
      if (branch.version !== options.expectedVersion) {
        throw new ConcurrencyError(`Branch ${JSON.stringify(branchId)} is at version ${branch.version}, not ${options.expectedVersion}. Reload and retry.`);
      }
      const next: Branch = { ...branch, state, version: branch.version + 1 };
      await this.#docs.writeBranch(next);
      return next;
    });
  }

  /** Deletes the branch (and, when recursive, its forks) with messages and checkpoints. */
  async delete(sessionId: string, branchId: string, options: { recursive?: boolean } & TenantScope): Promise<void> {
    this.#layout.branchFile(sessionId, branchId);
    await this.#locks.run(sessionId, async () => {
      await this.#docs.requireSession(sessionId, options);
      const doomed = ensureBranchDeletable(branchId, await this.#docs.listBranches(sessionId), options);
      // The documents go first: once they are gone the branches no longer exist, whatever a crash leaves.
      for (const id of doomed) await rm(this.#layout.branchFile(sessionId, id), { force: true });
      await fsyncDir(this.#layout.branchesDir(sessionId));
      for (const id of doomed) {
        await rm(this.#layout.messagesFile(sessionId, id), { force: true });
        await rm(this.#layout.checkpointsDir(sessionId, id), { recursive: true, force: true });
      }
    });
  }
}
