import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import type { Episode } from '../../conversation/episode.js';
import type { Message } from '../../conversation/message.js';
import { type Branch, type BranchParent, MAIN_BRANCH, type Session, type State } from '../../conversation/session.js';
import { BatonError, CheckpointCorruptError, ConcurrencyError, ConfigurationError, InvalidInputError, NotFoundError, StoreError } from '../../errors.js';
import { assertValidId, isValidId } from '../../ids.js';
import { cloneData } from '../cloneData.js';
import type {
  CheckpointRetention,
  CreateSessionInput,
  EpisodeFilter,
  EraseUserInput,
  EraseUserResult,
  ReadMessagesOptions,
  SessionChange,
  SessionFilter,
  Store,
  StoreBatch,
  StoreBatchResult,
  TenantScope,
  UpdateOptions,
} from '../store.js';
import {
  assertBatchCheckpoint,
  assertBranchId,
  assertCheckpoint,
  assertMessages,
  assertPendingWrites,
  assertSessionChange,
  assertSessionId,
  branchLineage,
  branchState,
  changedBranch,
  changedSession,
  checkpointsToPrune,
  ensureBranchDeletable,
  ensureCheckpointDeletable,
  matchesSessionFilter,
  newSession,
} from '../storeRules.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';
import { FileDocuments } from './fileDocuments.js';
import { FileEpisodeStore } from './fileEpisodeStore.js';
import { eraseFileUser } from './fileErasure.js';
import { fsyncDir, mapInBatches, readDirNames } from './fileIo.js';
import { FileLayout } from './fileLayout.js';
import {
  appendOps,
  checkpointOps,
  forkOps,
  loadRecord,
  pendingWriteOps,
  requireBranch,
  requireSession,
  sortedBranches,
} from './logPlans.js';
import type { LogOp, SessionImage } from './sessionImage.js';
import { SessionLocks } from './sessionLock.js';
import { SessionLogs } from './sessionLogs.js';

/** Options of {@link FileStore}. */
export interface FileStoreOptions {
  /** The root folder; created when missing. Relative paths resolve against the working directory. */
  directory: string;
  /**
   * A session lock not refreshed for this long is taken to belong to a crashed process and is
   * broken, in milliseconds (at least 2000; default 10 000).
   */
  lockStaleMs?: number;
  /** How long a write waits for another writer's lock before a `ConcurrencyError`, in milliseconds (default `lockStaleMs + 5000`). */
  lockWaitMs?: number;
  /**
   * Bytes of session logs whose sessions are kept in memory (least recently used dropped first;
   * default 64 MiB). A cached session is checked against its file (one `fstat`) on every call, so
   * it is never stale; this only bounds memory.
   */
  cacheBytes?: number;
}

const clone = cloneData;

/**
 * The embedded, durable {@link Store}: plain files under one folder, no native dependencies.
 * One folder per session holding one append-only log (`sessions/<id>/log.jsonl`, format version 2):
 * every write is one JSON line of operations (messages, the session or a branch document, a
 * checkpoint, pending writes, deletes), flushed with one `fdatasync`, so a durability point of a
 * turn ({@link FileStore.writeBatch}: its messages, state, session change and checkpoint) costs one
 * synced append (a prune rides along with the next one). Sessions are replayed from their log into memory and kept there (bounded by
 * `cacheBytes`); each call checks the file first, replays lines other processes appended, and
 * reloads a log compacted elsewhere. A log is compacted (rewritten whole and renamed into place)
 * when it has doubled since its last compaction. Folders of format version 1 (documents per
 * session, branch and checkpoint) are read as they are and migrated to a log on their first write.
 * Episodes live in `episodes/`, with an owner index of hard links so `findEpisodes` reads only the
 * tenant's and user's episodes. Several `FileStore`s, in one process or many, may share a folder:
 * every write to a session holds that session's lock (`proper-lockfile`), updates compare-and-set
 * `version`, and appends check seq continuity against the log under the lock. A line torn by a
 * crash is ignored on read and cut off by the next append. The format is described in
 * docs/architecture.md.
 *
 * Every method behaves as the {@link Store} contract says (the conformance suite checks it) and
 * also throws {@link StoreError} (with the I/O error as `cause`) when the disk fails or a stored
 * document is damaged (naming the file and line); a damaged checkpoint document throws
 * {@link CheckpointCorruptError} when it is the one loaded, and blocks neither loading an older one,
 * nor `listCheckpoints` (which leaves out one whose manifest fields cannot be read), nor pruning
 * (which may delete it). Ids are checked
 * before they touch a path. Meant for one machine: `listSessions`, `deleteInactiveSessions` and
 * `deleteCheckpointsOlderThan` read every session document, and on a
 * case-insensitive file system two session ids differing only in case share a folder.
 *
 * @example
 * ```ts
 * import { FileStore } from '@baton/core';
 * const store = new FileStore({ directory: './.data/baton' });
 * await store.createSession({ id: 'chat-1', userId: 'u-1' });
 * ```
 */
export class FileStore implements Store {
  readonly kind = 'file';
  /** The absolute root folder. */
  readonly directory: string;
  readonly #layout: FileLayout;
  readonly #docs: FileDocuments;
  readonly #locks: SessionLocks;
  readonly #logs: SessionLogs;
  readonly #episodes: FileEpisodeStore;
  #ready: Promise<void> | undefined;
  #closed = false;

  /**
   * @param options `{ directory, lockStaleMs?, lockWaitMs?, cacheBytes? }`
   * @throws {ConfigurationError} when `directory` is missing or empty
   */
  constructor(options: FileStoreOptions) {
    if (typeof options?.directory !== 'string' || options.directory.trim() === '') {
      throw new ConfigurationError(`FileStore needs a directory, got ${JSON.stringify(options?.directory)}: pass new FileStore({ directory: './.data/baton' }).`);
    }
    this.#layout = new FileLayout(options.directory);
    this.directory = this.#layout.root;
    this.#docs = new FileDocuments(this.#layout);
    const staleMs = Math.max(2000, options.lockStaleMs ?? 10_000);
    this.#locks = new SessionLocks(this.#layout, { staleMs, waitMs: options.lockWaitMs ?? staleMs + 5000 });
    this.#logs = new SessionLogs(this.#docs, options.cacheBytes ?? 64 * 1024 * 1024);
    this.#episodes = new FileEpisodeStore(this.#docs);
  }

  async createSession(input: CreateSessionInput): Promise<Session> {
    return this.#run('create a session', async () => {
      const session = newSession(input);
      const id = session.id;
      return this.#locks.run(id, async () => {
        if ((await this.#logs.read(id)) !== undefined) throw new ConcurrencyError(`Session ${JSON.stringify(id)} already exists.`);
        await rm(this.#layout.sessionDir(id), { recursive: true, force: true }); // what a crashed create left
        await mkdir(this.#layout.sessionDir(id), { recursive: true });
        const main: Branch = { id: MAIN_BRANCH, sessionId: id, createdAt: session.createdAt, state: {}, version: 1 };
        // As JSON, as a read of the log gives them back.
        const [stored, branch] = JSON.parse(JSON.stringify([session, main])) as [Session, Branch];
        const log = await this.#logs.create({ session: stored, branches: new Map([[MAIN_BRANCH, { branch, messages: [], checkpoints: [] }]]) });
        await fsyncDir(this.#layout.sessionsDir);
        return clone(log.image.session);
      });
    });
  }

  async getSession(id: string, scope: TenantScope = {}): Promise<Session | undefined> {
    return this.#run('read a session', async () => {
      assertTenantScope(scope);
      const image = await this.#logs.read(assertSessionId(id));
      return image !== undefined && inTenant(image.session, scope) ? clone(image.session) : undefined;
    });
  }

  async updateSession(id: string, change: SessionChange, options: UpdateOptions): Promise<Session> {
    return this.#run('update a session', async () => {
      assertSessionChange(change);
      return this.#write(id, options, (image) => [{ op: 'session', session: changedSession(image.session, change, options.expectedVersion) }], (image) => clone(image.session));
    });
  }

  async listSessions(filter: SessionFilter = {}): Promise<Session[]> {
    return this.#run('list sessions', async () => {
      const found = (await this.#allSessions()).filter((s) => matchesSessionFilter(s, filter));
      found.sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
      return (filter.limit === undefined ? found : found.slice(0, filter.limit)).map(clone);
    });
  }

  async deleteSession(id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete a session', async () => {
      assertSessionId(id);
      assertTenantScope(scope);
      return this.#locks.run(id, async () => {
        const session = (await this.#logs.read(id))?.session;
        if (session === undefined || !inTenant(session, scope)) return false;
        // Its episodes first (the one named after it, the default id, and any other in its owner's
        // index), so a crash before the folder is gone leaves a session a retried delete finds.
        if ((await this.#episodes.get(id, scope))?.sessionId === id) await this.#episodes.delete(id, scope);
        await this.#episodes.deleteOwned(scope, session.userId, id);
        await this.#removeSessionFolder(id);
        return true;
      });
    });
  }

  async deleteInactiveSessions(options: { idleFor: number; dryRun?: boolean } & TenantScope): Promise<string[]> {
    return this.#run('delete inactive sessions', async () => {
      const filter: SessionFilter = { activeBefore: new Date(Date.now() - options.idleFor).toISOString() };
      if (options.tenantId !== undefined) filter.tenantId = options.tenantId;
      const candidates = (await this.listSessions(filter)).map((s) => s.id);
      if (options.dryRun) return candidates;
      const deleted: string[] = [];
      for (const id of candidates) {
        const gone = await this.#locks.run(id, async () => {
          const session = (await this.#logs.read(id))?.session;
          if (session === undefined || !matchesSessionFilter(session, filter)) return false; // active again meanwhile
          await this.#removeSessionFolder(id);
          return true;
        });
        if (gone) deleted.push(id);
      }
      return deleted;
    });
  }

  async appendMessages(sessionId: string, branchId: string, messages: readonly Message[], scope: TenantScope = {}): Promise<{ inserted: number }> {
    return this.#run('append messages', async () => {
      assertBranchId(branchId);
      assertMessages(messages);
      let inserted = 0;
      await this.#write(
        sessionId,
        scope,
        (image) => {
          const ops = appendOps(requireBranch(image, sessionId, branchId, scope), messages);
          inserted = ops.length === 0 ? 0 : (ops[0] as Extract<LogOp, { op: 'messages' }>).messages.length;
          return ops;
        },
        () => undefined,
      );
      return { inserted };
    });
  }

  async readMessages(sessionId: string, branchId: string, options: ReadMessagesOptions = {}): Promise<Message[]> {
    return this.#run('read messages', async () => {
      assertBranchId(branchId);
      const image = requireSession(await this.#logs.read(assertSessionId(sessionId)), sessionId, options);
      const out: Message[] = [];
      for (const { branch, fromSeq, throughSeq } of branchLineage(branchId, (id) => image.branches.get(id)?.branch, sessionId, options)) {
        const own = image.branches.get(branch.id)!.messages;
        const first = own[0]?.seq ?? 0;
        const from = Math.max(0, fromSeq - first);
        const through = Math.min(own.length, throughSeq - first + 1);
        for (let index = from; index < through; index += 1) out.push(clone(own[index]!));
      }
      return out;
    });
  }

  async forkBranch(sessionId: string, input: { branchId: string; parent: BranchParent; state?: State }, scope: TenantScope = {}): Promise<Branch> {
    return this.#run('fork a branch', async () => {
      const { branchId, parent } = input;
      assertBranchId(branchId);
      assertBranchId(parent.branchId);
      const state = branchState(input.state ?? {});
      let forked: Branch | undefined;
      await this.#write(
        sessionId,
        scope,
        (image) => {
          const from = requireBranch(image, sessionId, parent.branchId, scope);
          const { ops, branch } = forkOps(image, from, branchId, parent.atSeq, state);
          forked = branch;
          return ops;
        },
        () => undefined,
      );
      return clone(forked!);
    });
  }

  async getBranch(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<Branch | undefined> {
    return this.#run('read a branch', async () => {
      assertBranchId(branchId);
      assertTenantScope(scope);
      const image = await this.#logs.read(assertSessionId(sessionId));
      if (image === undefined || !inTenant(image.session, scope)) return undefined;
      const branch = image.branches.get(branchId)?.branch;
      return branch && clone(branch);
    });
  }

  async listBranches(sessionId: string, scope: TenantScope = {}): Promise<Branch[]> {
    return this.#run('list branches', async () => {
      const image = requireSession(await this.#logs.read(assertSessionId(sessionId)), sessionId, scope);
      return sortedBranches(image).map(clone);
    });
  }

  async updateBranch(sessionId: string, branchId: string, change: { state: State }, options: UpdateOptions): Promise<Branch> {
    return this.#run('update a branch', async () => {
      assertBranchId(branchId);
      const state = branchState(change.state);
      return this.#write(
        sessionId,
        options,
        (image) => [{ op: 'branch', branch: changedBranch(requireBranch(image, sessionId, branchId, options).branch, state, options.expectedVersion) }],
        (image) => clone(image.branches.get(branchId)!.branch),
      );
    });
  }

  async deleteBranch(sessionId: string, branchId: string, options: { recursive?: boolean } & TenantScope = {}): Promise<void> {
    return this.#run('delete a branch', async () => {
      assertBranchId(branchId);
      await this.#write(
        sessionId,
        options,
        (image) => [{ op: 'deleteBranches', ids: ensureBranchDeletable(branchId, sortedBranches(requireSession(image, sessionId, options)), options) }],
        () => undefined,
      );
    });
  }

  async saveCheckpoint(checkpoint: Checkpoint, scope: TenantScope = {}): Promise<void> {
    return this.#run('save a checkpoint', async () => {
      const valid = assertCheckpoint(checkpoint);
      await this.#write(valid.sessionId, scope, (image) => checkpointOps(requireBranch(image, valid.sessionId, valid.branchId, scope), valid), () => undefined);
    });
  }

  async putPendingWrites(sessionId: string, branchId: string, checkpointId: string, writes: readonly PendingWrite[], scope: TenantScope = {}): Promise<void> {
    return this.#run('save pending writes', async () => {
      assertBranchId(branchId);
      assertValidId('checkpoint', checkpointId);
      const valid = assertPendingWrites(writes);
      await this.#write(sessionId, scope, (image) => pendingWriteOps(requireBranch(image, sessionId, branchId, scope), sessionId, checkpointId, valid), () => undefined);
    });
  }

  async loadCheckpoint(sessionId: string, branchId: string, id?: string, scope: TenantScope = {}): Promise<Checkpoint | undefined> {
    return this.#run('load a checkpoint', async () => {
      assertBranchId(branchId);
      if (id !== undefined) assertValidId('checkpoint', id);
      const branch = requireBranch(await this.#logs.read(assertSessionId(sessionId)), sessionId, branchId, scope);
      const record = id === undefined ? branch.checkpoints.at(-1) : branch.checkpoints.find((c) => c.id === id);
      return record && clone(loadRecord(record, sessionId, branchId));
    });
  }

  async listCheckpoints(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<CheckpointManifestEntry[]> {
    return this.#run('list checkpoints', async () => {
      assertBranchId(branchId);
      const branch = requireBranch(await this.#logs.read(assertSessionId(sessionId)), sessionId, branchId, scope);
      return branch.checkpoints.flatMap((c) => (c.manifest === undefined ? [] : [{ ...c.manifest }]));
    });
  }

  async pruneCheckpoints(sessionId: string, branchId: string, retention: CheckpointRetention, scope: TenantScope = {}): Promise<number> {
    return this.#run('prune checkpoints', async () => {
      assertBranchId(branchId);
      let pruned = 0;
      await this.#write(
        sessionId,
        scope,
        (image) => {
          const ids = checkpointsToPrune(requireBranch(image, sessionId, branchId, scope).checkpoints, retention);
          pruned = ids.length;
          return ids.length === 0 ? [] : [{ op: 'deleteCheckpoints', branchId, ids }];
        },
        () => undefined,
        // Retention needs no fsync of its own: the next synced write (the next durability point)
        // makes it durable; a crash before that brings back old checkpoints the next prune deletes.
        { sync: false },
      );
      return pruned;
    });
  }

  async deleteCheckpoint(sessionId: string, branchId: string, id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete a checkpoint', async () => {
      assertBranchId(branchId);
      assertValidId('checkpoint', id);
      let existed = false;
      await this.#write(
        sessionId,
        scope,
        (image) => {
          existed = ensureCheckpointDeletable(branchId, id, requireBranch(image, sessionId, branchId, scope).checkpoints);
          return existed ? [{ op: 'deleteCheckpoints', branchId, ids: [id] }] : [];
        },
        () => undefined,
      );
      return existed;
    });
  }

  async deleteCheckpointsOlderThan(before: string, scope: TenantScope = {}): Promise<number> {
    return this.#run('delete old checkpoints', async () => {
      let deleted = 0;
      for (const session of await this.#allSessions()) {
        if (scope.tenantId !== undefined && session.tenantId !== scope.tenantId) continue;
        await this.#write(
          session.id,
          { ...(session.tenantId === undefined ? {} : { tenantId: session.tenantId }) },
          (image) => {
            const ops: LogOp[] = [];
            for (const { branch, checkpoints } of image.branches.values()) {
              // The newest stays (a paused turn's); a damaged document is kept (its age is unknown).
              const ids = checkpoints.slice(0, -1).filter((record) => createdBefore(record, session.id, branch.id, before)).map((c) => c.id);
              if (ids.length > 0) ops.push({ op: 'deleteCheckpoints', branchId: branch.id, ids });
            }
            deleted += ops.reduce((n, op) => n + (op as Extract<LogOp, { op: 'deleteCheckpoints' }>).ids.length, 0);
            return ops;
          },
          () => undefined,
        ).catch((error: unknown) => {
          if (error instanceof NotFoundError) return; // deleted meanwhile
          throw error;
        });
      }
      return deleted;
    });
  }

  /**
   * Stores a durability point's writes with one fsync'd log line (see {@link StoreBatch}): every
   * check passes first, then everything is written at once, or nothing is.
   * @throws {ConcurrencyError} for a taken seq or a stale version; {@link NotFoundError} for a missing
   *   session or branch; {@link InvalidInputError} for bad input or a checkpoint of another branch
   */
  async writeBatch(batch: StoreBatch): Promise<StoreBatchResult> {
    return this.#run('write a batch', async () => {
      const { sessionId, branchId } = batch;
      const scope: TenantScope = batch.tenantId === undefined ? {} : { tenantId: batch.tenantId };
      assertBranchId(branchId);
      if (batch.messages !== undefined) assertMessages(batch.messages);
      const state = batch.branch && branchState(batch.branch.state);
      if (batch.session !== undefined) assertSessionChange(batch.session.change);
      const checkpoint = batch.checkpoint && assertCheckpoint(batch.checkpoint);
      assertBatchCheckpoint(batch);
      let inserted = 0;
      return this.#write(
        sessionId,
        scope,
        (image) => {
          const branch = requireBranch(image, sessionId, branchId, scope);
          const ops = batch.messages === undefined ? [] : appendOps(branch, batch.messages);
          inserted = ops.length === 0 ? 0 : (ops[0] as Extract<LogOp, { op: 'messages' }>).messages.length;
          if (state !== undefined) ops.push({ op: 'branch', branch: changedBranch(branch.branch, state, batch.branch!.expectedVersion) });
          if (batch.session !== undefined) ops.push({ op: 'session', session: changedSession(image.session, batch.session.change, batch.session.expectedVersion) });
          if (checkpoint !== undefined) ops.push(...checkpointOps(branch, checkpoint));
          return ops;
        },
        (image) => {
          const result: StoreBatchResult = { inserted };
          if (batch.session !== undefined) result.session = clone(image.session);
          if (state !== undefined) result.branch = clone(image.branches.get(branchId)!.branch);
          return result;
        },
      );
    });
  }

  async saveEpisode(episode: Episode): Promise<boolean> {
    return this.#run('save an episode', () => this.#episodes.save(episode));
  }

  async getEpisode(id: string, scope: TenantScope = {}): Promise<Episode | undefined> {
    return this.#run('read an episode', () => this.#episodes.get(id, scope));
  }

  async findEpisodes(filter: EpisodeFilter): Promise<Episode[]> {
    return this.#run('find episodes', () => this.#episodes.find(filter));
  }

  async deleteEpisode(id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete an episode', () => this.#episodes.delete(id, scope));
  }

  async eraseUser(input: EraseUserInput): Promise<EraseUserResult> {
    return this.#run("erase a user's data", () =>
      eraseFileUser(input, {
        sessions: () => this.#allSessions(),
        read: (id) => this.#logs.read(id),
        locks: this.#locks,
        episodes: this.#episodes,
        removeSession: (id) => this.#removeSessionFolder(id),
      }),
    );
  }

  /** Waits for this store's writes in flight; later calls throw {@link StoreError}. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#locks.idle();
  }

  /**
   * One write to a session: under its lock, the log brought up to date (a version 1 folder
   * migrated), `plan` decides the operations from the image (it throws to refuse, and nothing is
   * written), they are appended as one line, and `result` reads the image after the write.
   * @throws {NotFoundError} when the session does not exist
   */
  async #write<T>(
    sessionId: string,
    scope: TenantScope,
    plan: (image: SessionImage) => LogOp[],
    result: (image: SessionImage) => T,
    options: { sync?: boolean } = {},
  ): Promise<T> {
    assertSessionId(sessionId);
    assertTenantScope(scope);
    return this.#locks.run(sessionId, async () => {
      let log = await this.#logs.forWrite(sessionId);
      const ops = plan(requireSession(log?.image, sessionId, scope));
      if (ops.length > 0) log = await this.#logs.append(sessionId, log!, ops, options);
      return result(log!.image);
    });
  }

  /** Every stored session (a folder holding no session, half-created or being deleted, is skipped). */
  async #allSessions(): Promise<Session[]> {
    const ids = (await readDirNames(this.#layout.sessionsDir)).filter((name) => isValidId(name));
    const images = await mapInBatches(ids, (id) => this.#logs.read(id));
    return images.flatMap((image) => (image === undefined ? [] : [image.session]));
  }

  /** Moves the session's folder to the trash (one atomic rename), then removes it. Caller holds the lock. */
  async #removeSessionFolder(id: string): Promise<void> {
    const trash = join(this.#layout.trashDir, `${id}.${randomUUID()}`);
    await rename(this.#layout.sessionDir(id), trash);
    await fsyncDir(this.#layout.sessionsDir);
    this.#logs.forget(id);
    await rm(trash, { recursive: true, force: true });
  }

  /** Runs one store call: creates the folders on first use, and wraps I/O failures as {@link StoreError}. */
  async #run<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new StoreError(`The FileStore at ${this.directory} is closed; create a new FileStore to ${what}.`);
    try {
      this.#ready ??= this.#prepare();
      await this.#ready;
      return await work();
    } catch (error) {
      if (error instanceof BatonError) throw error;
      throw new StoreError(`FileStore could not ${what} under ${this.directory}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }

  async #prepare(): Promise<void> {
    const layout = this.#layout;
    try {
      for (const dir of [layout.sessionsDir, layout.episodesDir, layout.locksDir, layout.trashDir]) await mkdir(dir, { recursive: true });
    } catch (error) {
      this.#ready = undefined; // let a later call retry (e.g. once the disk is writable)
      throw error;
    }
    // Sessions whose delete was interrupted after the rename.
    for (const name of await readDirNames(layout.trashDir)) await rm(join(layout.trashDir, name), { recursive: true, force: true });
    await this.#episodes.ensureIndex();
  }
}

/** Whether a stored checkpoint was created before `before` (a damaged one is not: its age is unknown). */
function createdBefore(record: Parameters<typeof loadRecord>[0], sessionId: string, branchId: string, before: string): boolean {
  try {
    return loadRecord(record, sessionId, branchId).createdAt < before;
  } catch (error) {
    if (error instanceof CheckpointCorruptError) return false;
    throw error;
  }
}
