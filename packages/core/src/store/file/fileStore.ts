import type { AssetRef } from '../../conversation/asset.js';
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import type { Episode } from '../../conversation/episode.js';
import type { Message } from '../../conversation/message.js';
import type { Branch, BranchParent, Session, State } from '../../conversation/session.js';
import {
  ConfigurationError,
  type DocumentCorruptError,
  type LogRecordCorruptError,
  NotFoundError,
  StoreError,
} from '../../errors.js';
import { assertMaxAssetBytes } from '../assets/assetInput.js';
import type { BranchLease, LeaseAcquisition } from '../branchLease.js';
import type { EventLogEntry, EventLogPage, EventLogPosition, EventLogRetention } from '../eventLog.js';
import type {
  CheckpointRetention,
  CreateSessionInput,
  EpisodeFilter,
  EraseUserInput,
  EraseUserResult,
  PutAssetInput,
  ReadMessagesOptions,
  SessionChange,
  SessionFilter,
  Store,
  StoreBatch,
  StoreBatchResult,
  StoredAsset,
  TenantScope,
  UpdateOptions,
} from '../store.js';
import { scopeOf } from '../tenantScope.js';
import * as assets from './calls/assetCalls.js';
import * as branches from './calls/branchCalls.js';
import * as branchLeases from './calls/branchLeaseCalls.js';
import * as branchLogs from './calls/branchLogCalls.js';
import * as checkpoints from './calls/checkpointCalls.js';
import { eraseFileUser } from './calls/fileErasure.js';
import { repairSessionLog, verifySessionLog } from './calls/logCheckCalls.js';
import * as messages from './calls/messageCalls.js';
import * as sessionCalls from './calls/sessionCalls.js';
import { FileDocuments } from './fileDocuments.js';
import { FileEpisodeStore } from './fileEpisodeStore.js';
import { FileLayout } from './fileLayout.js';
import { FileSessions } from './fileSessions.js';
import type { FileStoreOptions } from './fileStoreOptions.js';
import { FileStoreRunner } from './fileStoreRunner.js';
import type { SessionLogRepair, SessionLogReport } from './log/logRepair.js';
import { INDEX_EVERY_BYTES } from './log/sessionLogs.js';
import { SessionLocks } from './sessionLock.js';

export type { FileStoreOptions } from './fileStoreOptions.js';

/**
 * The embedded, durable {@link Store}: plain files under one folder, no native dependencies.
 * One folder per session holding one append-only log (`sessions/<id>/log.jsonl`, format version 2):
 * every write is one JSON line of operations (messages, the session or a branch document, a
 * checkpoint, pending writes, deletes), flushed with one `fdatasync`, so a durability point of a
 * turn ({@link FileStore.writeBatch}: its messages, state, session change and checkpoint) costs one
 * synced append (a prune too). Beside the log, an index
 * (`log.index.json`: the session and branch documents, checkpoint manifests, and where in the log
 * each run of messages and each checkpoint is) lets a new process open a long session by reading
 * the index and the log lines after it, and `readMessages`/`loadCheckpoint` read only the byte
 * ranges they need; the index is only ever a cache of a flushed prefix of the log, checked against
 * it on open and rebuilt from it when missing or stale (`indexEveryBytes`). The index keeps a
 * CRC-32 of each run of messages: a run read back with the same checksum is not validated again,
 * and one whose bytes changed on disk throws {@link DocumentCorruptError}. `readMessages` returns
 * the stored messages themselves, deep-frozen (`Object.freeze`), as `InMemoryStore` does: no copy
 * of a long history, and changing one throws a `TypeError`. What a call has read
 * stays in memory (bounded by `cacheBytes`); each call checks the file first, replays lines other
 * processes appended, and reopens a log compacted elsewhere. A log is compacted (rewritten whole
 * and renamed into place) once it is more than 1.25 times what a snapshot would write (and over 16 KiB), so it stays
 * within about 1.5 times its messages' own JSON. Folders of format version
 * 1 (documents per session, branch and checkpoint) are read as they are and migrated to a log on
 * their first write. Assets (files uploaded to a session) live beside the log in
 * `sessions/<id>/assets/` (`<assetId>.bin` and its reference `<assetId>.json`, written last, after
 * the bytes are synced and renamed into place), so the log never holds their bytes and deleting the
 * session takes them along. Episodes live in `episodes/`, with an owner index of hard links so
 * `findEpisodes` reads only the tenant's and user's episodes. Several `FileStore`s, in one process
 * or many, may share a folder: every write to a session holds that session's lock (a kernel lock of
 * `locks/<id>.lock`, which a process that dies lets go at once; see `FileStoreOptions.lock`), updates compare-and-set `version`, and appends check seq continuity against
 * the log under the lock. A line torn by a crash is ignored on read and cut off by the next append.
 * The format is described in docs/architecture.md.
 *
 * Every method behaves as the {@link Store} contract says (the conformance suite checks it) and
 * also throws {@link StoreError} (with the I/O error as `cause`) when the disk fails, and
 * {@link LogRecordCorruptError} (a {@link DocumentCorruptError}) naming the file, the record and what
 * precedes it intact when a complete line of a log is damaged — every line carries a CRC-32C
 * (format 3), so damage is found exactly (a call that needs the line fails; the log is never
 * rewritten over it, but {@link FileStore.repair} salvages the records before it; `listSessions`,
 * `deleteInactiveSessions` and `deleteCheckpointsOlderThan` leave such a session out, and
 * `eraseUser` erases everything else first, then throws naming it). A damaged checkpoint document
 * throws {@link CheckpointCorruptError} when it is the one loaded, and blocks neither loading an
 * older one, nor `listCheckpoints` (which leaves out one whose manifest fields cannot be read), nor
 * pruning (which may delete it). Ids are checked before they touch a path. Meant for one machine:
 * `listSessions`, `deleteInactiveSessions` and `deleteCheckpointsOlderThan` read every session
 * document, and on a case-insensitive file system two session ids differing only in case share a
 * folder.
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
  readonly #sessions: FileSessions;
  readonly #episodes: FileEpisodeStore;
  readonly #maxAssetBytes: number;
  readonly #runner: FileStoreRunner;

  /**
   * @param options `{ directory, lock?, lockStaleMs?, lockWaitMs?, cacheBytes?, indexEveryBytes?, maxAssetBytes? }`
   * @throws {ConfigurationError} when `directory` is missing or empty, `maxAssetBytes` is not a positive whole
   *   number, or `lock` is neither `'kernel'` nor `'folder'`, or is `'kernel'` where its native build does not load
   */
  constructor(options: FileStoreOptions) {
    if (typeof options?.directory !== 'string' || options.directory.trim() === '') {
      throw new ConfigurationError(
        `FileStore needs a directory, got ${JSON.stringify(options?.directory)}: pass new FileStore({ directory: './.data/baton' }).`,
      );
    }
    const layout = new FileLayout(options.directory);
    this.directory = layout.root;
    const docs = new FileDocuments(layout);
    const staleMs = Math.max(2000, options.lockStaleMs ?? 10_000);
    const waitMs = options.lockWaitMs ?? staleMs + 5000;
    const locks = new SessionLocks(layout, { staleMs, waitMs, kind: options.lock });
    this.#sessions = new FileSessions(docs, locks, {
      cacheBytes: options.cacheBytes ?? 64 * 1024 * 1024,
      indexEveryBytes: Math.max(1, options.indexEveryBytes ?? INDEX_EVERY_BYTES),
    });
    this.#episodes = new FileEpisodeStore(docs);
    this.#maxAssetBytes = assertMaxAssetBytes('FileStore', options.maxAssetBytes);
    this.#runner = new FileStoreRunner(layout, this.#episodes);
  }

  async createSession(input: CreateSessionInput): Promise<Session> {
    return this.#run('create a session', () => sessionCalls.createSession(this.#sessions, input));
  }

  async getSession(id: string, scope: TenantScope = {}): Promise<Session | undefined> {
    return this.#run('read a session', () => sessionCalls.getSession(this.#sessions, id, scope));
  }

  async updateSession(id: string, change: SessionChange, options: UpdateOptions): Promise<Session> {
    return this.#run('update a session', () => sessionCalls.updateSession(this.#sessions, id, change, options));
  }

  async listSessions(filter: SessionFilter = {}): Promise<Session[]> {
    return this.#run('list sessions', () => sessionCalls.listSessions(this.#sessions, filter));
  }

  async deleteSession(id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete a session', () => sessionCalls.deleteSession(this.#sessions, this.#episodes, id, scope));
  }

  async deleteInactiveSessions(options: { idleFor: number; dryRun?: boolean } & TenantScope): Promise<string[]> {
    return this.#run('delete inactive sessions', () => sessionCalls.deleteInactiveSessions(this.#sessions, options));
  }

  async appendMessages(
    sessionId: string,
    branchId: string,
    batch: readonly Message[],
    scope: TenantScope = {},
  ): Promise<{ inserted: number }> {
    return this.#run('append messages', () =>
      messages.appendMessages(this.#sessions, sessionId, branchId, batch, scope),
    );
  }

  /** Reads from the log only the messages asked for (and keeps them in memory for the next call). */
  async readMessages(sessionId: string, branchId: string, options: ReadMessagesOptions = {}): Promise<Message[]> {
    return this.#run('read messages', () => messages.readMessages(this.#sessions, sessionId, branchId, options));
  }

  async forkBranch(
    sessionId: string,
    input: { branchId: string; parent: BranchParent; state?: State },
    scope: TenantScope = {},
  ): Promise<Branch> {
    return this.#run('fork a branch', () => branches.forkBranch(this.#sessions, sessionId, input, scope));
  }

  async getBranch(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<Branch | undefined> {
    return this.#run('read a branch', () => branches.getBranch(this.#sessions, sessionId, branchId, scope));
  }

  async listBranches(sessionId: string, scope: TenantScope = {}): Promise<Branch[]> {
    return this.#run('list branches', () => branches.listBranches(this.#sessions, sessionId, scope));
  }

  async updateBranch(
    sessionId: string,
    branchId: string,
    change: { state: State },
    options: UpdateOptions,
  ): Promise<Branch> {
    return this.#run('update a branch', () =>
      branches.updateBranch(this.#sessions, sessionId, branchId, change, options),
    );
  }

  async deleteBranch(
    sessionId: string,
    branchId: string,
    options: { recursive?: boolean } & TenantScope = {},
  ): Promise<void> {
    return this.#run('delete a branch', () => branches.deleteBranch(this.#sessions, sessionId, branchId, options));
  }

  async saveCheckpoint(checkpoint: Checkpoint, scope: TenantScope = {}): Promise<void> {
    return this.#run('save a checkpoint', () => checkpoints.saveCheckpoint(this.#sessions, checkpoint, scope));
  }

  async putPendingWrites(
    sessionId: string,
    branchId: string,
    checkpointId: string,
    writes: readonly PendingWrite[],
    scope: TenantScope = {},
  ): Promise<void> {
    return this.#run('save pending writes', () =>
      checkpoints.putPendingWrites(this.#sessions, sessionId, branchId, checkpointId, writes, scope),
    );
  }

  async loadCheckpoint(
    sessionId: string,
    branchId: string,
    id?: string,
    scope: TenantScope = {},
  ): Promise<Checkpoint | undefined> {
    return this.#run('load a checkpoint', () =>
      checkpoints.loadCheckpoint(this.#sessions, sessionId, branchId, id, scope),
    );
  }

  async listCheckpoints(
    sessionId: string,
    branchId: string,
    scope: TenantScope = {},
  ): Promise<CheckpointManifestEntry[]> {
    return this.#run('list checkpoints', () => checkpoints.listCheckpoints(this.#sessions, sessionId, branchId, scope));
  }

  async pruneCheckpoints(
    sessionId: string,
    branchId: string,
    retention: CheckpointRetention,
    scope: TenantScope = {},
  ): Promise<number> {
    return this.#run('prune checkpoints', () =>
      checkpoints.pruneCheckpoints(this.#sessions, sessionId, branchId, retention, scope),
    );
  }

  async deleteCheckpoint(sessionId: string, branchId: string, id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete a checkpoint', () =>
      checkpoints.deleteCheckpoint(this.#sessions, sessionId, branchId, id, scope),
    );
  }

  async deleteCheckpointsOlderThan(before: string, scope: TenantScope = {}): Promise<number> {
    return this.#run('delete old checkpoints', async () =>
      checkpoints.deleteCheckpointsOlderThan(this.#sessions, (await this.#sessions.all()).sessions, before, scope),
    );
  }

  /**
   * Stores a durability point's writes with one fsync'd log line (see {@link StoreBatch}): every
   * check passes first, then everything is written at once, or nothing is.
   * @throws {ConcurrencyError} for a taken seq or a stale version; {@link NotFoundError} for a missing
   *   session or branch; {@link InvalidInputError} for bad input or a checkpoint of another branch
   */
  async writeBatch(batch: StoreBatch): Promise<StoreBatchResult> {
    return this.#run('write a batch', () => messages.writeBatch(this.#sessions, batch));
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

  /** Stores an asset in `sessions/<id>/assets/` (see `AssetStore.putAsset`): synced and renamed into place, its reference written last. */
  async putAsset(sessionId: string, input: PutAssetInput, scope: TenantScope = {}): Promise<AssetRef> {
    return this.#run('store an asset', () =>
      assets.putAsset(this.#sessions, sessionId, input, scope, this.#maxAssetBytes),
    );
  }

  /** The asset's reference and bytes, checked against its SHA-256 (a mismatch throws `DocumentCorruptError`). */
  async getAsset(sessionId: string, assetId: string, scope: TenantScope = {}): Promise<StoredAsset | undefined> {
    return this.#run('read an asset', () => assets.getAsset(this.#sessions, sessionId, assetId, scope));
  }

  async listAssets(sessionId: string, scope: TenantScope = {}): Promise<AssetRef[]> {
    return this.#run('list assets', () => assets.listAssets(this.#sessions, sessionId, scope));
  }

  async deleteAsset(sessionId: string, assetId: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#run('delete an asset', () => assets.deleteAsset(this.#sessions, sessionId, assetId, scope));
  }

  async eraseUser(input: EraseUserInput): Promise<EraseUserResult> {
    const sessions = this.#sessions;
    return this.#run("erase a user's data", () =>
      eraseFileUser(input, {
        all: () => sessions.all(),
        read: (id) => sessions.logs.read(id),
        locks: sessions.locks,
        episodes: this.#episodes,
        removeSession: (id) => sessions.remove(id),
        countAssets: (id) => assets.countAssets(sessions, id),
      }),
    );
  }

  /**
   * Checks a session's log record by record: every record's CRC-32C, its JSON, and that it
   * continues the records before it. Reads the whole file (not the index, so it also finds damage
   * that calls served from the index never read); takes no lock and changes nothing. A torn last
   * line a crash left is reported in `tornBytes`, not as damage.
   *
   * @returns the report: `ok`, how many records are intact (`intactRecords`, `intactBytes`) and the
   *   messages they hold per branch (`intactThroughSeq`), and the first damaged record (`damage`:
   *   line number, byte offset, the error, how many records follow it). A format 1 folder is
   *   reported as `version: 1` once it reads (its documents are checked as a read checks them).
   * @throws {NotFoundError} when the session does not exist; {@link DocumentCorruptError} for a
   *   format 1 folder that does not read; {@link UnsupportedSchemaVersionError} for a newer log
   * @example
   * ```ts
   * const report = await store.verify('chat-1');
   * if (!report.ok) console.error(`record ${report.damage?.record} is damaged; intact:`, report.intactThroughSeq);
   * ```
   */
  async verify(sessionId: string): Promise<SessionLogReport> {
    return this.#run('verify a session log', () => verifySessionLog(this.#sessions, sessionId));
  }

  /**
   * Salvages a session whose log is damaged: under the session's lock, the intact records before
   * the first damaged one are written as a new log (a snapshot, atomically renamed into place and
   * flushed), after the damaged file was kept beside it as `log.damaged-<time>.jsonl` (a hard
   * link or a flushed copy: the original bytes are never deleted). The session then reads and
   * writes as it stood at the last intact record; what the damaged record and the records after it
   * held is only in the kept file. An intact log (or a format 1 folder) is left as it is
   * (`repaired: false`).
   *
   * @returns what {@link FileStore.verify} reports, with `repaired` and `movedTo`
   * @throws {NotFoundError} when the session does not exist; {@link LogRecordCorruptError} when the
   *   damage is in the header, the session document or the main branch's (nothing before it to
   *   keep: restore the file from a backup, or delete the session)
   * @example
   * ```ts
   * const { repaired, movedTo, intactThroughSeq } = await store.repair('chat-1');
   * ```
   */
  async repair(sessionId: string): Promise<SessionLogRepair> {
    return this.#run('repair a session log', () => repairSessionLog(this.#sessions, sessionId));
  }

  async appendEvents(
    sessionId: string,
    branchId: string,
    entries: readonly EventLogEntry[],
    scope: TenantScope = {},
  ): Promise<void> {
    return this.#run('append events', () =>
      branchLogs.appendEvents(this.#sessions, sessionId, branchId, entries, scope),
    );
  }

  async readEvents(
    sessionId: string,
    branchId: string,
    options: { after?: EventLogPosition } & TenantScope = {},
  ): Promise<EventLogPage> {
    return this.#run('read events', () =>
      branchLogs.readEvents(this.#sessions, sessionId, branchId, options.after, scopeOf(options)),
    );
  }

  async pruneEvents(
    sessionId: string,
    branchId: string,
    retention: EventLogRetention,
    scope: TenantScope = {},
  ): Promise<number> {
    return this.#run('prune events', () =>
      branchLogs.pruneEvents(this.#sessions, sessionId, branchId, retention, scope),
    );
  }

  async acquireBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
  ): Promise<LeaseAcquisition> {
    return this.#run('take a branch lease', () =>
      branchLeases.acquireLease(this.#sessions, sessionId, branchId, input),
    );
  }

  async renewBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number; ttlMs: number } & TenantScope,
  ): Promise<boolean> {
    return this.#run('renew a branch lease', () =>
      branchLeases.changeHeldLease(this.#sessions, sessionId, branchId, input),
    );
  }

  async releaseBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number } & TenantScope,
  ): Promise<boolean> {
    return this.#run('release a branch lease', () =>
      branchLeases.changeHeldLease(this.#sessions, sessionId, branchId, {
        owner: input.owner,
        epoch: input.epoch,
        ...scopeOf(input),
      }),
    );
  }

  async getBranchLease(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<BranchLease | undefined> {
    return this.#run('read a branch lease', () => branchLeases.getLease(this.#sessions, sessionId, branchId, scope));
  }

  async listExpiredLeases(options: { before: string; limit?: number }): Promise<BranchLease[]> {
    return this.#run('list expired leases', () =>
      branchLeases.listExpiredLeases(this.#sessions, options.before, options.limit ?? 1000),
    );
  }

  /**
   * The lock this store takes across processes: `'kernel'`, or `'folder'` (asked for, or where the
   * kernel lock's native build does not load and `lock` was left unset). See {@link FileStoreOptions.lock}.
   * @example
   * ```ts
   * const store = new FileStore({ directory: './.data/baton' });
   * if (store.lock === 'folder') console.warn('FileStore: no kernel lock here; a crashed writer holds its sessions for lockStaleMs');
   * ```
   */
  get lock(): 'kernel' | 'folder' {
    return this.#sessions.locks.kind;
  }

  /**
   * Resolves once this store's writes in flight, and the upkeep they left (a log's compaction or
   * index write, which run after the write that made them due returns, on the session's lock), have
   * finished. The store stays open: for a benchmark or test that looks at the files after a write.
   * To shut down, use {@link close}, which waits for the same.
   * @example
   * ```ts
   * await store.appendMessages('chat-1', 'main', messages);
   * await store.idle(); // the compaction or index write this append made due is done
   * ```
   */
  async idle(): Promise<void> {
    await this.#sessions.locks.idle();
  }

  /** Waits for this store's writes in flight and closes the lock files it keeps open; later calls throw {@link StoreError}. */
  async close(): Promise<void> {
    this.#runner.close();
    await this.#sessions.locks.idle();
    this.#sessions.locks.closeFiles();
  }

  /** Runs one store call (see {@link FileStoreRunner.run}). */
  #run<T>(what: string, work: () => Promise<T>): Promise<T> {
    return this.#runner.run(what, work);
  }
}
