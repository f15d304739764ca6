import type { AssetRef } from '../../conversation/asset.js';
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import type { Episode } from '../../conversation/episode.js';
import type { Message } from '../../conversation/message.js';
import type { Branch, BranchParent, Session, State } from '../../conversation/session.js';
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { checkAssetInput } from '../assets/assetInput.js';
import type { BranchLease, LeaseAcquisition } from '../branchLease.js';
import { cloneData } from '../cloneData.js';
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
import {
  assertBranchId,
  changedSession,
  copyValidCheckpoint,
  matchesSessionFilter,
  newSession,
} from '../storeRules.js';
import { inTenant, scopeOf } from '../tenantScope.js';
import {
  type AssetLimits,
  deleteRecordAsset,
  getRecordAsset,
  listRecordAssets,
  putRecordAsset,
} from './inMemoryAssets.js';
import { deleteRecordBranch, forkRecordBranch, updateRecordBranch } from './inMemoryBranches.js';
import {
  acquireRecordLease,
  appendRecordEvents,
  changeRecordLease,
  expiredRecordLeases,
  pruneRecordEvents,
  readRecordEvents,
} from './inMemoryBranchLogs.js';
import {
  addPendingWrites,
  checkpointManifest,
  deleteCheckpointsBefore,
  deleteRecordCheckpoint,
  findCheckpoint,
  pruneRecordCheckpoints,
} from './inMemoryCheckpoints.js';
import { InMemoryEpisodes } from './inMemoryEpisodes.js';
import { appendRecordMessages, readRecordMessages, writeRecordBatch } from './inMemoryMessages.js';
import { checkpointList, eraseUserRecords } from './inMemoryRecords.js';
import { InMemorySessions } from './inMemorySessions.js';
import { assetLimits, type InMemoryStoreOptions, sessionLimits } from './inMemoryStoreOptions.js';

export type { InMemoryStoreOptions } from './inMemoryStoreOptions.js';

/**
 * A {@link Store} in process memory: fast, for tests and for single-process bots that need no
 * durability. Values are copied in, so callers can never change stored data by reference; they are
 * copied out too, except messages: `readMessages` returns the stored messages themselves, deep-frozen
 * (`Object.freeze`), so a long history is read without a copy and changing one throws a `TypeError`.
 * With `maxSessions` it stays bounded in a long-running server: creating a session beyond the limit
 * first removes closed sessions and sessions idle for `idleTtlMs` (least recently used first; never
 * one in use, so never an active turn), with their messages, checkpoints and assets; episodes stay.
 * Assets (uploaded files) are bounded too: each by `maxAssetBytes`, all together by `maxAssetBytesTotal`.
 *
 * @param options `{ maxSessions?, idleTtlMs?, maxAssetBytes?, maxAssetBytesTotal? }`
 * @throws {ConfigurationError} for a `maxSessions` or `idleTtlMs` that is not a positive number, or
 *   asset limits that are not positive whole numbers
 * @example
 * ```ts
 * import { InMemoryStore } from '@baton/core';
 * const store = new InMemoryStore({ maxSessions: 10_000, idleTtlMs: 60 * 60_000 });
 * await store.createSession({ id: 'chat-1', userId: 'u-1' });
 * ```
 */
export class InMemoryStore implements Store {
  readonly kind = 'memory';
  readonly #sessions: InMemorySessions;
  readonly #episodes = new InMemoryEpisodes();
  readonly #assetLimits: AssetLimits;

  constructor(options: InMemoryStoreOptions = {}) {
    this.#sessions = new InMemorySessions(sessionLimits(options));
    this.#assetLimits = assetLimits(options);
  }

  /** How many sessions the store holds now. */
  get size(): number {
    return this.#sessions.byId.size;
  }

  async createSession(input: CreateSessionInput): Promise<Session> {
    const session = newSession(input);
    this.#sessions.add(session);
    return cloneData(session);
  }

  async getSession(id: string, scope: TenantScope = {}): Promise<Session | undefined> {
    const record = this.#sessions.find(id, scope);
    return record && cloneData(record.session);
  }

  async updateSession(id: string, change: SessionChange, options: UpdateOptions): Promise<Session> {
    const record = this.#sessions.required(id, options);
    record.session = changedSession(record.session, change, options.expectedVersion);
    return cloneData(record.session);
  }

  async listSessions(filter: SessionFilter = {}): Promise<Session[]> {
    const found = [...this.#sessions.byId.values()]
      .map((r) => r.session)
      .filter((s) => matchesSessionFilter(s, filter));
    found.sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
    return cloneData(filter.limit === undefined ? found : found.slice(0, filter.limit));
  }

  async deleteSession(id: string, scope: TenantScope = {}): Promise<boolean> {
    const record = this.#sessions.find(id, scope);
    if (!record) return false;
    for (const episode of this.#episodes.byId.values()) {
      if (episode.sessionId === id && inTenant(episode, scope)) this.#episodes.byId.delete(episode.id);
    }
    return this.#sessions.byId.delete(id);
  }

  async deleteInactiveSessions(options: { idleFor: number; dryRun?: boolean } & TenantScope): Promise<string[]> {
    const before = new Date(Date.now() - options.idleFor).toISOString();
    const filter: SessionFilter = { activeBefore: before };
    if (options.tenantId !== undefined) filter.tenantId = options.tenantId;
    const ids = (await this.listSessions(filter)).map((s) => s.id);
    if (!options.dryRun) for (const id of ids) this.#sessions.byId.delete(id);
    return ids;
  }

  async appendMessages(
    sessionId: string,
    branchId: string,
    messages: readonly Message[],
    scope: TenantScope = {},
  ): Promise<{ inserted: number }> {
    const record = this.#sessions.required(sessionId, scope);
    return appendRecordMessages(record, sessionId, branchId, messages);
  }

  async readMessages(sessionId: string, branchId: string, options: ReadMessagesOptions = {}): Promise<Message[]> {
    const record = this.#sessions.required(sessionId, options);
    return readRecordMessages(record, sessionId, branchId, options);
  }

  async forkBranch(
    sessionId: string,
    input: { branchId: string; parent: BranchParent; state?: State },
    scope: TenantScope = {},
  ): Promise<Branch> {
    return forkRecordBranch(this.#sessions.required(sessionId, scope), sessionId, input, scope);
  }

  async getBranch(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<Branch | undefined> {
    const record = this.#sessions.find(sessionId, scope);
    assertBranchId(branchId);
    const branch = record?.branches.get(branchId);
    return branch && cloneData(branch);
  }

  async listBranches(sessionId: string, scope: TenantScope = {}): Promise<Branch[]> {
    return cloneData([...this.#sessions.required(sessionId, scope).branches.values()]);
  }

  async updateBranch(
    sessionId: string,
    branchId: string,
    change: { state: State },
    options: UpdateOptions,
  ): Promise<Branch> {
    return updateRecordBranch(this.#sessions.required(sessionId, options), branchId, change, options.expectedVersion);
  }

  async deleteBranch(
    sessionId: string,
    branchId: string,
    options: { recursive?: boolean } & TenantScope = {},
  ): Promise<void> {
    deleteRecordBranch(this.#sessions.required(sessionId, options), branchId, options);
  }

  async saveCheckpoint(checkpoint: Checkpoint, scope: TenantScope = {}): Promise<void> {
    const valid = copyValidCheckpoint(checkpoint);
    const list = this.#checkpoints(valid.sessionId, valid.branchId, scope);
    if (list.some((c) => c.id === valid.id)) return;
    list.push(valid);
  }

  async putPendingWrites(
    sessionId: string,
    branchId: string,
    checkpointId: string,
    writes: readonly PendingWrite[],
    scope: TenantScope = {},
  ): Promise<void> {
    addPendingWrites(this.#checkpoints(sessionId, branchId, scope), checkpointId, writes);
  }

  async loadCheckpoint(
    sessionId: string,
    branchId: string,
    id?: string,
    scope: TenantScope = {},
  ): Promise<Checkpoint | undefined> {
    return findCheckpoint(this.#checkpoints(sessionId, branchId, scope), id);
  }

  async listCheckpoints(
    sessionId: string,
    branchId: string,
    scope: TenantScope = {},
  ): Promise<CheckpointManifestEntry[]> {
    return checkpointManifest(this.#checkpoints(sessionId, branchId, scope));
  }

  async pruneCheckpoints(
    sessionId: string,
    branchId: string,
    retention: CheckpointRetention,
    scope: TenantScope = {},
  ): Promise<number> {
    const list = this.#checkpoints(sessionId, branchId, scope);
    return pruneRecordCheckpoints(this.#sessions.required(sessionId, scope), branchId, list, retention);
  }

  async deleteCheckpoint(sessionId: string, branchId: string, id: string, scope: TenantScope = {}): Promise<boolean> {
    const list = this.#checkpoints(sessionId, branchId, scope);
    return deleteRecordCheckpoint(this.#sessions.required(sessionId, scope), branchId, list, id);
  }

  async deleteCheckpointsOlderThan(before: string, scope: TenantScope = {}): Promise<number> {
    return deleteCheckpointsBefore(this.#sessions.byId.values(), before, scope);
  }

  async saveEpisode(episode: Episode): Promise<boolean> {
    return this.#episodes.save(episode);
  }

  async getEpisode(id: string, scope: TenantScope = {}): Promise<Episode | undefined> {
    return this.#episodes.get(id, scope);
  }

  async deleteEpisode(id: string, scope: TenantScope = {}): Promise<boolean> {
    return this.#episodes.delete(id, scope);
  }

  /** Stores an asset in the session's record (see `AssetStore.putAsset`); within `maxAssetBytes` and `maxAssetBytesTotal`. */
  async putAsset(sessionId: string, input: PutAssetInput, scope: TenantScope = {}): Promise<AssetRef> {
    const record = this.#sessions.required(sessionId, scope);
    const ref = await putRecordAsset(record, this.#sessions.byId.values(), checkAssetInput(input), this.#assetLimits);
    if (this.#sessions.byId.get(sessionId) !== record)
      throw new NotFoundError(`Session ${JSON.stringify(sessionId)} was deleted while its asset was read.`);
    return ref;
  }

  async getAsset(sessionId: string, assetId: string, scope: TenantScope = {}): Promise<StoredAsset | undefined> {
    return getRecordAsset(this.#sessions.required(sessionId, scope), assetId);
  }

  async listAssets(sessionId: string, scope: TenantScope = {}): Promise<AssetRef[]> {
    return listRecordAssets(this.#sessions.required(sessionId, scope));
  }

  async deleteAsset(sessionId: string, assetId: string, scope: TenantScope = {}): Promise<boolean> {
    return deleteRecordAsset(this.#sessions.required(sessionId, scope), assetId);
  }

  async eraseUser(input: EraseUserInput): Promise<EraseUserResult> {
    return eraseUserRecords(this.#sessions.byId, this.#episodes.byId, input);
  }

  async findEpisodes(filter: EpisodeFilter): Promise<Episode[]> {
    return this.#episodes.find(filter);
  }

  /**
   * Stores a durability point's writes all or nothing (see {@link StoreBatch}): every check passes
   * before anything changes.
   * @throws {ConcurrencyError} for a taken seq or a stale version; {@link NotFoundError} for a missing
   *   session or branch; {@link InvalidInputError} for bad input or a checkpoint of another branch
   */
  async writeBatch(batch: StoreBatch): Promise<StoreBatchResult> {
    const record = this.#sessions.required(batch.sessionId, scopeOf(batch));
    return writeRecordBatch(record, batch);
  }

  async appendEvents(
    sessionId: string,
    branchId: string,
    entries: readonly EventLogEntry[],
    scope: TenantScope = {},
  ): Promise<void> {
    appendRecordEvents(this.#sessions.withBranch(sessionId, branchId, scope), branchId, entries);
  }

  async readEvents(
    sessionId: string,
    branchId: string,
    options: { after?: EventLogPosition } & TenantScope = {},
  ): Promise<EventLogPage> {
    return readRecordEvents(this.#sessions.withBranch(sessionId, branchId, scopeOf(options)), branchId, options.after);
  }

  async pruneEvents(
    sessionId: string,
    branchId: string,
    retention: EventLogRetention,
    scope: TenantScope = {},
  ): Promise<number> {
    return pruneRecordEvents(this.#sessions.withBranch(sessionId, branchId, scope), branchId, retention);
  }

  async acquireBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
  ): Promise<LeaseAcquisition> {
    return acquireRecordLease(this.#sessions.withBranch(sessionId, branchId, scopeOf(input)), branchId, input);
  }

  async renewBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number; ttlMs: number } & TenantScope,
  ): Promise<boolean> {
    return changeRecordLease(this.#sessions.withBranch(sessionId, branchId, scopeOf(input)), branchId, input);
  }

  async releaseBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number } & TenantScope,
  ): Promise<boolean> {
    return changeRecordLease(this.#sessions.withBranch(sessionId, branchId, scopeOf(input)), branchId, {
      owner: input.owner,
      epoch: input.epoch,
    });
  }

  async getBranchLease(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<BranchLease | undefined> {
    const record = this.#sessions.find(sessionId, scope);
    assertBranchId(branchId);
    const lease = record?.branches.has(branchId) === true ? record.leases?.get(branchId) : undefined;
    return lease && { ...lease };
  }

  async listExpiredLeases(options: { before: string; limit?: number }): Promise<BranchLease[]> {
    return expiredRecordLeases(this.#sessions.byId.values(), options);
  }

  async close(): Promise<void> {}

  #checkpoints(sessionId: string, branchId: string, scope: TenantScope): Checkpoint[] {
    return checkpointList(this.#sessions.withBranch(sessionId, branchId, scope), branchId);
  }
}
