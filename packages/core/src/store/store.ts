import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../conversation/checkpoint.js';
import type { Episode } from '../conversation/episode.js';
import type { Message } from '../conversation/message.js';
import type { Metadata } from '../conversation/metadata.js';
import type { Branch, BranchParent, Session, State } from '../conversation/session.js';
import type { AssetStore } from './assets/assetStore.js';
import type { BranchLeaseStore } from './branchLease.js';
import type { EventLogStore } from './eventLog.js';

export type { AssetStore, PutAssetInput, StoredAsset } from './assets/assetStore.js';

/**
 * Restricts a read or write to one tenant: a store never returns, changes or deletes another
 * tenant's data.
 *
 * The rule, the same in every store: a call that names a session (or an episode) sees it only when
 * the scope's `tenantId` equals the session's — and a scope without `tenantId` is the space of
 * sessions created without one. So a call without a tenant never sees a tenant's session: it gets
 * `undefined`, `false` or a {@link NotFoundError}, exactly as if the session did not exist. Only the
 * fleet-wide maintenance calls (`listSessions`, `deleteInactiveSessions`, `deleteCheckpointsOlderThan`)
 * span every tenant when no `tenantId` is given; they are operator calls, and a tenant-facing caller
 * passes its `tenantId` to them too.
 *
 * @example
 * ```ts
 * await store.createSession({ id: 'chat-1', tenantId: 'acme' });
 * await store.readMessages('chat-1', 'main', { tenantId: 'acme' }); // the messages
 * await store.readMessages('chat-1', 'main', { tenantId: 'globex' }); // throws NotFoundError
 * await store.getSession('chat-1'); // undefined: no tenant given
 * ```
 */
export interface TenantScope {
  tenantId?: string;
}

/** What `createSession` takes. `id` is validated (see `isValidId`). */
export interface CreateSessionInput {
  id: string;
  tenantId?: string;
  userId?: string;
  metadata?: Metadata;
  state?: State;
  /** ISO-8601; defaults to now. */
  createdAt?: string;
}

/** The fields `updateSession` may change. `version` is bumped by the store. */
export type SessionChange = Partial<
  Pick<Session, 'status' | 'closedAt' | 'closedReason' | 'lastActivityAt' | 'metadata' | 'state' | 'userId'>
>;

/** Compare-and-set guard of an update: the write succeeds only if the stored version is this one. */
export interface UpdateOptions extends TenantScope {
  expectedVersion: number;
}

/** Filter of `listSessions`. All fields are ANDed; `activeBefore` is an ISO-8601 bound on `lastActivityAt`. */
export interface SessionFilter extends TenantScope {
  userId?: string;
  status?: Session['status'];
  activeBefore?: string;
  limit?: number;
}

/** Sessions: create, read, compare-and-set update, list, delete. */
export interface SessionStore {
  /**
   * Creates a session and its `main` branch.
   * @throws {InvalidIdError} for an unsafe id; {@link ConcurrencyError} when the id exists
   */
  createSession(input: CreateSessionInput): Promise<Session>;
  /** The session, or `undefined` when it does not exist or belongs to another tenant. */
  getSession(id: string, scope?: TenantScope): Promise<Session | undefined>;
  /**
   * Applies `change` if the stored version is `expectedVersion`; returns the new session (version + 1).
   * @throws {ConcurrencyError} on a stale version; {@link NotFoundError} when missing
   */
  updateSession(id: string, change: SessionChange, options: UpdateOptions): Promise<Session>;
  /** Sessions matching the filter, most recently active first. Without `tenantId`, spans every tenant (an operator call). */
  listSessions(filter?: SessionFilter): Promise<Session[]>;
  /**
   * Deletes the session with all its branches, messages, checkpoints, pending writes, assets and episodes
   * (every episode whose `sessionId` is this session), so nothing of the conversation stays.
   * Returns whether it existed (for this tenant).
   */
  deleteSession(id: string, scope?: TenantScope): Promise<boolean>;
  /**
   * Deletes sessions whose `lastActivityAt` is older than `idleFor` milliseconds ago, with their
   * branches, messages and checkpoints; their episodes stay (they are what memory keeps of a
   * conversation; erase them with `deleteEpisode` or `eraseUser`). With `dryRun`, deletes nothing.
   * Returns the ids that were (or would be) deleted. Without `tenantId`, spans every tenant.
   */
  deleteInactiveSessions(options: { idleFor: number; dryRun?: boolean } & TenantScope): Promise<string[]>;
}

/** Range of `readMessages`: inclusive bounds on `seq`, and the tenant scope. */
export interface ReadMessagesOptions extends TenantScope {
  fromSeq?: number;
  throughSeq?: number;
}

/**
 * Messages: idempotent appends, reads that follow a branch's parent reference. Every call is
 * scoped to a tenant (see {@link TenantScope}): another tenant's session is a {@link NotFoundError}.
 */
export interface MessageStore {
  /**
   * Appends messages, each with its `seq`. Idempotent per `(sessionId, branchId, seq)`: a message
   * already stored with the same id is skipped, so a retried write never duplicates.
   * @returns how many were newly stored
   * @throws {ConcurrencyError} when a seq is taken by a different message (another writer);
   *   {@link NotFoundError} when the session (of this tenant) or branch does not exist
   */
  appendMessages(
    sessionId: string,
    branchId: string,
    messages: readonly Message[],
    scope?: TenantScope,
  ): Promise<{ inserted: number }>;
  /**
   * The branch's messages in `seq` order: for a fork, its parent's first `atSeq` messages (read
   * through the parent, recursively) and then its own. The caller must not change them: a store
   * returns copies, or (`InMemoryStore`, `FileStore`) its stored messages deep-frozen, where a
   * change throws `TypeError`; either way what is stored stays as written.
   * @throws {NotFoundError} when the session (of `options.tenantId`) or branch does not exist
   */
  readMessages(sessionId: string, branchId: string, options?: ReadMessagesOptions): Promise<Message[]>;
}

/** Branches: fork by reference, list, update branch state, delete without orphaning; every call scoped to a tenant (see {@link TenantScope}). */
export interface BranchStore {
  /**
   * Creates branch `branchId` referring to the first `parent.atSeq` messages of `parent.branchId`.
   * @throws {ConcurrencyError} when the branch exists; {@link NotFoundError} when the parent does not;
   *   {@link InvalidInputError} when `atSeq` is past the parent's last message
   */
  forkBranch(
    sessionId: string,
    input: { branchId: string; parent: BranchParent; state?: State },
    scope?: TenantScope,
  ): Promise<Branch>;
  /** The branch, or `undefined` when it (or the session, for this tenant) does not exist. @throws {InvalidIdError} for unsafe ids */
  getBranch(sessionId: string, branchId: string, scope?: TenantScope): Promise<Branch | undefined>;
  /** Every branch of the session, `main` included. @throws {NotFoundError} when the session (of this tenant) does not exist */
  listBranches(sessionId: string, scope?: TenantScope): Promise<Branch[]>;
  /**
   * Replaces a branch's state if its version is `expectedVersion`.
   * @throws {ConcurrencyError} on a stale version
   */
  updateBranch(sessionId: string, branchId: string, change: { state: State }, options: UpdateOptions): Promise<Branch>;
  /**
   * Deletes a branch with its messages and checkpoints.
   * @throws {BranchHasChildrenError} when forks refer to it and `recursive` is not set;
   *   {@link InvalidInputError} for `main` (delete the session instead)
   */
  deleteBranch(sessionId: string, branchId: string, options?: { recursive?: boolean } & TenantScope): Promise<void>;
}

/** Retention of `pruneCheckpoints`: keep the newest `last` and/or those younger than `maxAgeMs`. */
export interface CheckpointRetention {
  last?: number;
  maxAgeMs?: number;
}

/**
 * Checkpoints: immutable documents with a manifest, pending writes, retention, deletes by id.
 * Every call that names a session is scoped to a tenant (see {@link TenantScope}): another
 * tenant's session is a {@link NotFoundError}.
 */
export interface CheckpointStore {
  /** Saves a checkpoint (idempotent by id: a second save of the same id is a no-op). @throws {NotFoundError} when its session (of this tenant) or branch does not exist */
  saveCheckpoint(checkpoint: Checkpoint, scope?: TenantScope): Promise<void>;
  /**
   * Adds finished tool results of the unfinished step to checkpoint `checkpointId`; idempotent per
   * `toolCallId`. They are returned in the checkpoint's `pendingWrites` on load.
   */
  putPendingWrites(
    sessionId: string,
    branchId: string,
    checkpointId: string,
    writes: readonly PendingWrite[],
    scope?: TenantScope,
  ): Promise<void>;
  /**
   * The checkpoint `id`, or the newest of the branch when `id` is omitted; `undefined` when none.
   * Only that checkpoint is read: a damaged other checkpoint never blocks it, so when the newest
   * is damaged, loading an older one by id recovers.
   * @throws {CheckpointCorruptError} when the stored document of the checkpoint loaded is damaged
   */
  loadCheckpoint(
    sessionId: string,
    branchId: string,
    id?: string,
    scope?: TenantScope,
  ): Promise<Checkpoint | undefined>;
  /**
   * The branch's checkpoints, oldest first. Read from the manifest fields only, so a damaged
   * checkpoint never makes it throw: one whose manifest fields cannot be read (a `FileStore` file
   * that is not JSON or lacks them) is left out; one whose manifest is intact is listed even when
   * the rest of its document is damaged, and `loadCheckpoint` of it throws `CheckpointCorruptError`.
   */
  listCheckpoints(sessionId: string, branchId: string, scope?: TenantScope): Promise<CheckpointManifestEntry[]>;
  /**
   * Deletes the branch's checkpoints outside the retention; the newest is always kept. Returns how
   * many were deleted. Damaged checkpoints count like the others (by save order; by age from their
   * manifest, or when that cannot be read, from when they were written) and may be deleted.
   */
  pruneCheckpoints(
    sessionId: string,
    branchId: string,
    retention: CheckpointRetention,
    scope?: TenantScope,
  ): Promise<number>;
  /**
   * Deletes one checkpoint of the branch, with its pending writes. The branch's newest checkpoint is
   * refused: it is where a paused turn stands (its pending requests and finished tool results), so
   * deleting it would invalidate the request ids and run finished tools again.
   * @returns whether it existed
   * @throws {CheckpointInUseError} for the branch's newest checkpoint; {@link NotFoundError} when the
   *   session (of this tenant) or branch does not exist; {@link InvalidIdError} for unsafe ids
   * @example
   * ```ts
   * const [oldest] = await store.listCheckpoints('chat-1', 'main', { tenantId: 'acme' });
   * await store.deleteCheckpoint('chat-1', 'main', oldest.id, { tenantId: 'acme' }); // true
   * ```
   */
  deleteCheckpoint(sessionId: string, branchId: string, id: string, scope?: TenantScope): Promise<boolean>;
  /**
   * Deletes every checkpoint created before `before` (ISO-8601), across sessions (of the tenant,
   * when given), except the newest checkpoint of each branch, however old: it is where a paused
   * turn stands (its pending requests and finished tool results), so deleting it would invalidate
   * the request ids and run finished tools again. Returns how many were deleted.
   */
  deleteCheckpointsOlderThan(before: string, scope?: TenantScope): Promise<number>;
}

/** Filter of `findEpisodes`: newest first, `since` an ISO-8601 bound on `endedAt`. */
export interface EpisodeFilter extends TenantScope {
  userId?: string;
  since?: string;
  limit?: number;
}

/** Episodes of closed sessions; a lookup by id matches the tenant exactly (see {@link TenantScope}). */
export interface EpisodeStore {
  /** Saves an episode; idempotent by id (a second save of the same id keeps the first). Returns whether it was new. */
  saveEpisode(episode: Episode): Promise<boolean>;
  /** The episode, or `undefined` when it does not exist or belongs to another tenant. */
  getEpisode(id: string, scope?: TenantScope): Promise<Episode | undefined>;
  /** Episodes of exactly this tenant (no `tenantId`: episodes without one), and user when given, newest `endedAt` first. */
  findEpisodes(filter: EpisodeFilter): Promise<Episode[]>;
  /** Deletes the episode (of this tenant). Returns whether it existed. @throws {InvalidIdError} for an unsafe id */
  deleteEpisode(id: string, scope?: TenantScope): Promise<boolean>;
}

/** Whose data `eraseUser` removes: one user of one tenant (no `tenantId`: the user's data without a tenant). */
export interface EraseUserInput extends TenantScope {
  userId: string;
}

/** What `eraseUser` removed, counted per kind (a branch count includes each session's `main`). */
export interface EraseUserResult {
  sessions: number;
  branches: number;
  messages: number;
  /** Checkpoints, each with its pending writes. */
  checkpoints: number;
  episodes: number;
  /** Assets of the erased sessions (stores with the asset capability count them; see {@link AssetStore}). */
  assets?: number;
}

/** Erasure of a person's data (a right-to-be-forgotten request). */
export interface ErasureStore {
  /**
   * Removes every session of the user in the tenant with all its branches, messages, checkpoints,
   * pending writes and assets, and every episode of the user in the tenant. Another user's data, and the
   * same user id under another tenant, are untouched. Idempotent: a second call returns zeros.
   * @param input `{ tenantId?, userId }`
   * @returns the counts removed, per kind
   * @throws {InvalidIdError} for an unsafe tenant or user id
   * @example
   * ```ts
   * const removed = await store.eraseUser({ tenantId: 'acme', userId: 'u-42' });
   * // { sessions: 2, branches: 3, messages: 41, checkpoints: 6, episodes: 2, assets: 1 }
   * ```
   */
  eraseUser(input: EraseUserInput): Promise<EraseUserResult>;
}

/**
 * The writes of one durability point of a turn, stored together by {@link BatchStore.writeBatch}:
 * the branch's messages not stored yet, then the branch state, then the session change, then a
 * checkpoint, then the prune of the branch's old checkpoints (that order is the order of the
 * separate calls it replaces: `appendMessages`, `updateBranch`, `updateSession`, `saveCheckpoint`,
 * `pruneCheckpoints`).
 */
export interface StoreBatch extends TenantScope {
  sessionId: string;
  branchId: string;
  /** Appended as `appendMessages` appends them (idempotent per seq). */
  messages?: readonly Message[];
  /** The branch's new state, compare-and-set as `updateBranch` does. */
  branch?: { state: State; expectedVersion: number };
  /** A change of the session, compare-and-set as `updateSession` does. */
  session?: { change: SessionChange; expectedVersion: number };
  /** Saved as `saveCheckpoint` saves it (its `sessionId` and `branchId` must be the batch's). */
  checkpoint?: Checkpoint;
  /**
   * After the checkpoint, the branch's checkpoints outside this retention are deleted as
   * `pruneCheckpoints` deletes them (the newest, which may be the batch's own, is always kept), in
   * the same write: on `FileStore` the same fsync'd log line, so a turn that prunes flushes once.
   */
  pruneCheckpoints?: CheckpointRetention;
}

/** What {@link BatchStore.writeBatch} stored: messages newly inserted, and the documents it changed. */
export interface StoreBatchResult {
  inserted: number;
  /** How many checkpoints `pruneCheckpoints` deleted, when the batch asked for a prune. */
  pruned?: number;
  /** The session after the change, when the batch changed it. */
  session?: Session;
  /** The branch after the change, when the batch changed it. */
  branch?: Branch;
}

/** A store that can store a durability point's writes in one write (see {@link writeStoreBatch} for stores that cannot). */
export interface BatchStore {
  /**
   * Stores the batch all or nothing: every check (session and branch exist for the tenant, seqs,
   * versions, the checkpoint) passes before anything is written, and then everything is durable at
   * once (`FileStore`: one fsync'd log line).
   * @throws {ConcurrencyError} when a seq holds another message or a version is stale (nothing is stored);
   *   {@link NotFoundError} when the session (of this tenant) or branch does not exist;
   *   {@link InvalidInputError} for bad messages, state or a checkpoint of another branch
   */
  writeBatch(batch: StoreBatch): Promise<StoreBatchResult>;
}

/**
 * Everything Baton persists, behind one object. Every implementation passes the store conformance
 * suite (`test/conformance`). Ids are validated on every call.
 */
export interface Store
  extends SessionStore,
    MessageStore,
    BranchStore,
    CheckpointStore,
    EpisodeStore,
    ErasureStore,
    Partial<BatchStore>,
    Partial<AssetStore>,
    Partial<EventLogStore>,
    Partial<BranchLeaseStore> {
  /** A short name for logs and benchmarks (`'memory'`, `'file'`, `'mongo'`). */
  readonly kind: string;
  /** Releases connections and handles. The store is unusable afterwards. */
  close(): Promise<void>;
}
