import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import type { Episode } from '../../conversation/episode.js';
import { BatonError, type CheckpointCorruptError, ConcurrencyError, ConfigurationError, StoreError } from '../../errors.js';
import type { Message } from '../../conversation/message.js';
import { type Branch, type BranchParent, MAIN_BRANCH, type Session, type State } from '../../conversation/session.js';
import { FileBranchStore } from './fileBranchStore.js';
import { FileCheckpointStore } from './fileCheckpointStore.js';
import { FileDocuments, parseMessage } from './fileDocuments.js';
import { FileEpisodeStore } from './fileEpisodeStore.js';
import { eraseFileUser } from './fileErasure.js';
import { fsyncDir, readDirNames } from './fileIo.js';
import { FileLayout } from './fileLayout.js';
import { appendJsonLines } from './jsonLines.js';
import { SessionLocks } from './sessionLock.js';
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
  TenantScope,
  UpdateOptions,
} from '../store.js';
import { applySessionChange, assertMessages, branchLineage, matchesSessionFilter, newSession, planAppend } from '../storeRules.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';

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
}

/**
 * The embedded, durable {@link Store}: plain files under one folder, no native dependencies.
 * One folder per session; `session.json` and branch documents are replaced by atomic rename;
 * messages are append-only JSON Lines per branch (`messages/<branchId>.jsonl`), each append flushed
 * with fsync; checkpoints are immutable JSON files with their pending writes in a JSON Lines file
 * beside them; episodes live in `episodes/`, with an owner index of hard links so `findEpisodes`
 * reads only the tenant's and user's episodes. Several `FileStore`s, in one process or many, may
 * share a folder: every write to a session holds that session's lock (`proper-lockfile`), updates
 * compare-and-set `version`, and appends check seq continuity against the file under the lock.
 * A line torn by a crash is ignored on read and cut off by the next append. Nothing is cached.
 *
 * Every method behaves as the {@link Store} contract says (the conformance suite checks it) and
 * also throws {@link StoreError} (with the I/O error as `cause`) when the disk fails or a stored
 * document is damaged; a damaged checkpoint throws {@link CheckpointCorruptError} when it is the one
 * loaded, and blocks neither loading an older one, nor `listCheckpoints` (which leaves out a file
 * whose manifest fields cannot be read), nor pruning (which may delete it). Ids are checked
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
  readonly #branches: FileBranchStore;
  readonly #checkpoints: FileCheckpointStore;
  readonly #episodes: FileEpisodeStore;
  #ready: Promise<void> | undefined;
  #closed = false;

  /**
   * @param options `{ directory, lockStaleMs?, lockWaitMs? }`
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
    this.#branches = new FileBranchStore(this.#docs, this.#locks);
    this.#checkpoints = new FileCheckpointStore(this.#docs, this.#locks);
    this.#episodes = new FileEpisodeStore(this.#docs);
  }

  async createSession(input: CreateSessionInput): Promise<Session> {
    return this.#run('create a session', async () => {
      const session = newSession(input);
      const id = session.id;
      return this.#locks.run(id, async () => {
        if ((await this.#docs.readSession(id)) !== undefined) throw new ConcurrencyError(`Session ${JSON.stringify(id)} already exists.`);
        await rm(this.#layout.sessionDir(id), { recursive: true, force: true }); // what a crashed create left
        await mkdir(this.#layout.branchesDir(id), { recursive: true });
        await mkdir(this.#layout.messagesDir(id), { recursive: true });
        await writeFile(this.#layout.messagesFile(id, MAIN_BRANCH), '');
        await fsyncDir(this.#layout.messagesDir(id));
        await this.#docs.writeBranch({ id: MAIN_BRANCH, sessionId: id, createdAt: session.createdAt, state: {}, version: 1 });
        await this.#docs.writeSession(session);
        await fsyncDir(this.#layout.sessionsDir);
        return session;
      });
    });
  }

  async getSession(id: string, scope: TenantScope = {}): Promise<Session | undefined> {
    return this.#run('read a session', async () => {
      assertTenantScope(scope);
      const session = await this.#docs.readSession(id);
      return session !== undefined && inTenant(session, scope) ? session : undefined;
    });
  }

  async updateSession(id: string, change: SessionChange, options: UpdateOptions): Promise<Session> {
    return this.#run('update a session', async () => {
      this.#layout.sessionDir(id);
      return this.#locks.run(id, async () => {
        const current = await this.#docs.requireSession(id, options);
        if (current.version !== options.expectedVersion) {
          throw new ConcurrencyError(
            `Session ${JSON.stringify(id)} is at version ${current.version}, not ${options.expectedVersion}: another writer changed it. Reload and retry.`,
          );
        }
        const next = applySessionChange(current, change);
        await this.#docs.writeSession(next);
        return next;
      });
    });
  }

  async listSessions(filter: SessionFilter = {}): Promise<Session[]> {
    return this.#run('list sessions', async () => {
      const found = (await this.#docs.allSessions()).filter((s) => matchesSessionFilter(s, filter));
      found.sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
      return filter.limit === undefined ? found : found.slice(0, filter.limit);
    });
  }

  async deleteSession(id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete a session', async () => {
      this.#layout.sessionDir(id);
      assertTenantScope(scope);
      return this.#locks.run(id, async () => {
        const session = await this.#docs.readSession(id);
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
          const session = await this.#docs.readSession(id);
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
      const file = this.#layout.messagesFile(sessionId, branchId);
      assertMessages(messages);
      return this.#locks.run(sessionId, async () => {
        const branch = await this.#docs.requireBranch(sessionId, branchId, scope);
        const first = messages[0];
        if (first === undefined) return { inserted: 0 };
        const firstOwnSeq = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
        const inserted = await appendJsonLines(
          file,
          parseMessage,
          (oldest) => oldest.seq <= first.seq,
          (tail) => {
            const bySeq = new Map(tail.map((m) => [m.seq, m]));
            const lastSeq = tail.at(-1)?.seq ?? firstOwnSeq - 1;
            return planAppend(branchId, messages, { firstOwnSeq, lastSeq, storedAt: (seq) => bySeq.get(seq) });
          },
        );
        return { inserted };
      });
    });
  }

  async readMessages(sessionId: string, branchId: string, options: ReadMessagesOptions = {}): Promise<Message[]> {
    return this.#run('read messages', async () => {
      this.#layout.messagesFile(sessionId, branchId);
      await this.#docs.requireSession(sessionId, options);
      const lineage = await this.#docs.lineage(sessionId, branchId);
      if (!lineage.has(branchId)) await this.#docs.requireBranch(sessionId, branchId, options);
      const out: Message[] = [];
      for (const { branch, fromSeq, throughSeq } of branchLineage(branchId, (id) => lineage.get(id), sessionId, options)) {
        for (const message of await this.#docs.readOwnMessages(sessionId, branch.id)) {
          if (message.seq >= fromSeq && message.seq <= throughSeq) out.push(message);
        }
      }
      return out;
    });
  }

  async forkBranch(sessionId: string, input: { branchId: string; parent: BranchParent; state?: State }, scope: TenantScope = {}): Promise<Branch> {
    return this.#run('fork a branch', () => this.#branches.fork(sessionId, input, scope));
  }

  async getBranch(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<Branch | undefined> {
    return this.#run('read a branch', async () => {
      this.#layout.branchFile(sessionId, branchId);
      assertTenantScope(scope);
      const session = await this.#docs.readSession(sessionId);
      return session !== undefined && inTenant(session, scope) ? this.#docs.readBranch(sessionId, branchId) : undefined;
    });
  }

  async listBranches(sessionId: string, scope: TenantScope = {}): Promise<Branch[]> {
    return this.#run('list branches', async () => {
      await this.#docs.requireSession(sessionId, scope);
      return this.#docs.listBranches(sessionId);
    });
  }

  async updateBranch(sessionId: string, branchId: string, change: { state: State }, options: UpdateOptions): Promise<Branch> {
    return this.#run('update a branch', () => this.#branches.update(sessionId, branchId, change, options));
  }

  async deleteBranch(sessionId: string, branchId: string, options: { recursive?: boolean } & TenantScope = {}): Promise<void> {
    return this.#run('delete a branch', () => this.#branches.delete(sessionId, branchId, options));
  }

  async saveCheckpoint(checkpoint: Checkpoint, scope: TenantScope = {}): Promise<void> {
    return this.#run('save a checkpoint', () => this.#checkpoints.save(checkpoint, scope));
  }

  async putPendingWrites(sessionId: string, branchId: string, checkpointId: string, writes: readonly PendingWrite[], scope: TenantScope = {}): Promise<void> {
    return this.#run('save pending writes', () => this.#checkpoints.putPendingWrites(sessionId, branchId, checkpointId, writes, scope));
  }

  async loadCheckpoint(sessionId: string, branchId: string, id?: string, scope: TenantScope = {}): Promise<Checkpoint | undefined> {
    return this.#run('load a checkpoint', () => this.#checkpoints.load(sessionId, branchId, id, scope));
  }

  async listCheckpoints(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<CheckpointManifestEntry[]> {
    return this.#run('list checkpoints', () => this.#checkpoints.list(sessionId, branchId, scope));
  }

  async pruneCheckpoints(sessionId: string, branchId: string, retention: CheckpointRetention, scope: TenantScope = {}): Promise<number> {
    return this.#run('prune checkpoints', () => this.#checkpoints.prune(sessionId, branchId, retention, scope));
  }

  async deleteCheckpoint(sessionId: string, branchId: string, id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete a checkpoint', () => this.#checkpoints.delete(sessionId, branchId, id, scope));
  }

  async deleteCheckpointsOlderThan(before: string, scope: TenantScope = {}): Promise<number> {
    return this.#run('delete old checkpoints', () => this.#checkpoints.deleteOlderThan(before, scope));
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
      eraseFileUser(input, { docs: this.#docs, locks: this.#locks, episodes: this.#episodes, removeSession: (id) => this.#removeSessionFolder(id) }),
    );
  }

  /** Waits for this store's writes in flight; later calls throw {@link StoreError}. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#locks.idle();
  }

  /** Moves the session's folder to the trash (one atomic rename), then removes it. Caller holds the lock. */
  async #removeSessionFolder(id: string): Promise<void> {
    const trash = join(this.#layout.trashDir, `${id}.${randomUUID()}`);
    await rename(this.#layout.sessionDir(id), trash);
    await fsyncDir(this.#layout.sessionsDir);
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
