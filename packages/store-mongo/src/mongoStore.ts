import type {
  AssetRef,
  Branch,
  BranchLease,
  BranchParent,
  Checkpoint,
  CheckpointManifestEntry,
  CheckpointRetention,
  CreateSessionInput,
  Episode,
  EpisodeFilter,
  EraseUserInput,
  EraseUserResult,
  EventLogEntry,
  EventLogPage,
  EventLogPosition,
  EventLogRetention,
  LeaseAcquisition,
  Message,
  PendingWrite,
  PutAssetInput,
  ReadMessagesOptions,
  Session,
  SessionChange,
  SessionFilter,
  State,
  Store,
  StoredAsset,
  TenantScope,
  UpdateOptions,
} from '@baton/core';
import { StoreError } from '@baton/core';
import type { Db, MongoClient } from 'mongodb';
import { orderFactory, storeClient } from './collections/mongoClient.js';
import { createIndexes, type MongoCollections, openCollections } from './collections/mongoCollections.js';
import type { MongoContext } from './collections/mongoContext.js';
import { toStoreError, withStoreErrors } from './collections/mongoErrors.js';
import { migrateTenantFields, type TenantFieldsReport } from './migrations/migrateTenantFields.js';
import {
  type MongoStoreConnection,
  type MongoStoreOptions,
  type ResolvedMongoStoreOptions,
  resolveMongoStoreOptions,
} from './mongoStoreOptions.js';
import { BranchCache } from './operations/branchCache.js';
import * as assets from './operations/mongoAssets.js';
import * as branches from './operations/mongoBranches.js';
import * as branchLogs from './operations/mongoBranchLogs.js';
import * as checkpoints from './operations/mongoCheckpoints.js';
import * as episodes from './operations/mongoEpisodes.js';
import * as messages from './operations/mongoMessages.js';
import * as sessions from './operations/mongoSessions.js';
import { SessionTenants } from './operations/sessionTenants.js';

/**
 * A {@link Store} on MongoDB (or a MongoDB-compatible server such as FerretDB): sessions, messages,
 * branches, checkpoints with pending writes, and episodes, in six collections.
 *
 * Built for one write path without multi-document transactions: appends are idempotent through
 * deterministic `_id`s and a unique `(sessionId, branchId, seq)` index; session and branch updates
 * compare-and-set `version`; checkpoints are immutable documents. A turn costs three round trips
 * (insert the turn's messages, insert the checkpoint, update the session); four on FerretDB, whose
 * conditional updates are not atomic, so an update first claims its version (see
 * {@link MongoStoreOptions.versionClaims}). Every command on
 * messages, branches, checkpoints and pending writes names the session id, so each of those
 * collections can be sharded on `{ sessionId: 'hashed' }` (see the README). Every call that names a
 * session is scoped to its tenant (see `TenantScope`): the session's tenant is checked with the
 * tenant in the session filter, once, then remembered (a tenant never changes), so the turn's three
 * round trips stay three. Messages, branches, checkpoints and pending writes carry their session's
 * `tenantId`, and every command on them names it. Indexes are created, and a database written by
 * an older version migrated (see {@link MongoStore.migrate}), on first use or by {@link MongoStore.init}.
 * Documents are written with `schemaVersion` (core's `SCHEMA_VERSIONS`) and migrated on read.
 * Assets (files uploaded to a session) are kept in GridFS's format in the bucket `<prefix>assets`
 * (see {@link MongoStore.putAsset}), each chunk naming its session and tenant.
 *
 * @param connection `{ url, clientOptions? }` (the store owns the client) or `{ client }` (yours)
 * @param options `{ dbName?, collectionPrefix?, checkpointTtlSeconds?, sharded?, serverSelectionTimeoutMS?, operationTimeoutMS?, versionClaims?, branchCacheSize? }`
 * @throws {ConfigurationError} for a missing url or a bad option
 * @example
 * ```ts
 * import { MongoStore } from '@baton/store-mongo';
 * const store = new MongoStore({ url: 'mongodb://127.0.0.1:27017/' }, { dbName: 'support' });
 * await store.createSession({ id: 'chat-81', userId: 'u-42' });
 * await store.close();
 * ```
 */
export class MongoStore implements Store {
  readonly kind = 'mongo';
  /** The database the collections live in. */
  readonly db: Db;
  readonly #client: MongoClient;
  readonly #ownsClient: boolean;
  readonly #options: ResolvedMongoStoreOptions;
  readonly #context: MongoContext;
  /** The last event log position this process wrote per branch (`<sessionId>/<branchId>`), so an append needs no read. */
  readonly #eventLogEnds = new Map<string, EventLogPosition>();
  #init: Promise<void> | undefined;
  /** Whether init() has succeeded (so calls need not await it). */
  #ready = false;
  #closed = false;

  constructor(connection: MongoStoreConnection, options: MongoStoreOptions = {}) {
    this.#options = resolveMongoStoreOptions(options);
    const { client, ownsClient } = storeClient(connection, this.#options.serverSelectionTimeoutMS);
    this.#client = client;
    this.#ownsClient = ownsClient;
    this.db = this.#client.db(this.#options.dbName);
    const collections = openCollections(this.db, this.#options.collectionPrefix);
    this.#context = {
      collections,
      branches: new BranchCache(this.#options.branchCacheSize),
      tenants: new SessionTenants(this.#options.branchCacheSize),
      versionClaims: this.#options.versionClaims === true,
      newOrder: orderFactory(this.#client),
    };
  }

  /** The six collections, for inspection and administration (e.g. sharding them). */
  get collections(): MongoCollections {
    return this.#context.collections;
  }

  /**
   * Creates the indexes and, the first time it opens a database of `schemaVersion` 1, gives the
   * documents of tenants' sessions their `tenantId` (see {@link MongoStore.migrate}); once per store;
   * later calls return the same promise, a failed attempt is retried on the next call.
   * @throws {StoreError} when the server is unreachable; {@link ConfigurationError} when `checkpointTtlSeconds` is set on a server without TTL indexes
   */
  init(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreError('This MongoStore is closed; create a new one.'));
    this.#init ??= this.#setUp().catch((error: unknown) => {
      this.#init = undefined;
      throw toStoreError('create its indexes', error);
    });
    return this.#init;
  }

  /** Whether updates claim their version first (see {@link MongoStoreOptions.versionClaims}); known after `init()`. */
  get usesVersionClaims(): boolean {
    return this.#context.versionClaims;
  }

  async #setUp(): Promise<void> {
    await this.#client.connect();
    await createIndexes(this.#context.collections, this.#options);
    await migrateTenantFields(this.#context.collections);
    if (this.#options.versionClaims === 'auto') {
      const info = await this.db.admin().command({ buildInfo: 1 });
      this.#context.versionClaims = 'ferretdb' in info || 'ferretdbVersion' in info;
    }
    this.#ready = true;
  }

  /**
   * Gives every message, branch, checkpoint and pending-write document of a session with a tenant
   * that tenant's id where it has none (documents written before `schemaVersion` 2). `init()` does
   * this once per database; call it again after a rolling upgrade during which processes of an
   * older version kept writing. Idempotent.
   * @returns how many documents were changed, per collection
   * @throws {StoreError} when the server fails
   * @example
   * ```ts
   * const report = await store.migrate(); // { messages: 41, branches: 3, checkpoints: 6, pendingWrites: 0 }
   * ```
   */
  migrate(): Promise<TenantFieldsReport> {
    return this.#run(
      'migrate its documents',
      () => migrateTenantFields(this.#context.collections, { force: true }),
      true,
    );
  }

  createSession(input: CreateSessionInput): Promise<Session> {
    return this.#run('create a session', () => sessions.createSession(this.#context, input));
  }
  getSession(id: string, scope?: TenantScope): Promise<Session | undefined> {
    return this.#run('read a session', () => sessions.getSession(this.#context, id, scope));
  }
  updateSession(id: string, change: SessionChange, options: UpdateOptions): Promise<Session> {
    return this.#run('update a session', () => sessions.updateSession(this.#context, id, change, options));
  }
  listSessions(filter?: SessionFilter): Promise<Session[]> {
    return this.#run('list sessions', () => sessions.listSessions(this.#context, filter));
  }
  deleteSession(id: string, scope?: TenantScope): Promise<boolean> {
    return this.#run('delete a session', () => sessions.deleteSession(this.#context, id, scope));
  }
  deleteInactiveSessions(options: { idleFor: number; dryRun?: boolean } & TenantScope): Promise<string[]> {
    return this.#run('delete inactive sessions', () => sessions.deleteInactiveSessions(this.#context, options));
  }

  appendMessages(
    sessionId: string,
    branchId: string,
    list: readonly Message[],
    scope?: TenantScope,
  ): Promise<{ inserted: number }> {
    return this.#run('append messages', () => messages.appendMessages(this.#context, sessionId, branchId, list, scope));
  }
  readMessages(sessionId: string, branchId: string, options?: ReadMessagesOptions): Promise<Message[]> {
    return this.#run('read messages', () => messages.readMessages(this.#context, sessionId, branchId, options));
  }

  forkBranch(
    sessionId: string,
    input: { branchId: string; parent: BranchParent; state?: State },
    scope?: TenantScope,
  ): Promise<Branch> {
    return this.#run('fork a branch', () => branches.forkBranch(this.#context, sessionId, input, scope));
  }
  getBranch(sessionId: string, branchId: string, scope?: TenantScope): Promise<Branch | undefined> {
    return this.#run('read a branch', () => branches.getBranch(this.#context, sessionId, branchId, scope));
  }
  listBranches(sessionId: string, scope?: TenantScope): Promise<Branch[]> {
    return this.#run('list branches', () => branches.listBranches(this.#context, sessionId, scope));
  }
  updateBranch(sessionId: string, branchId: string, change: { state: State }, options: UpdateOptions): Promise<Branch> {
    return this.#run('update a branch', () =>
      branches.updateBranch(this.#context, sessionId, branchId, change, options),
    );
  }
  deleteBranch(sessionId: string, branchId: string, options?: { recursive?: boolean } & TenantScope): Promise<void> {
    return this.#run('delete a branch', () => branches.deleteBranch(this.#context, sessionId, branchId, options));
  }

  saveCheckpoint(checkpoint: Checkpoint, scope?: TenantScope): Promise<void> {
    return this.#run('save a checkpoint', () => checkpoints.saveCheckpoint(this.#context, checkpoint, scope));
  }
  putPendingWrites(
    sessionId: string,
    branchId: string,
    checkpointId: string,
    writes: readonly PendingWrite[],
    scope?: TenantScope,
  ): Promise<void> {
    return this.#run('save pending writes', () =>
      checkpoints.putPendingWrites(this.#context, sessionId, branchId, checkpointId, writes, scope),
    );
  }
  loadCheckpoint(
    sessionId: string,
    branchId: string,
    id?: string,
    scope?: TenantScope,
  ): Promise<Checkpoint | undefined> {
    return this.#run('load a checkpoint', () =>
      checkpoints.loadCheckpoint(this.#context, sessionId, branchId, id, scope),
    );
  }
  listCheckpoints(sessionId: string, branchId: string, scope?: TenantScope): Promise<CheckpointManifestEntry[]> {
    return this.#run('list checkpoints', () => checkpoints.listCheckpoints(this.#context, sessionId, branchId, scope));
  }
  pruneCheckpoints(
    sessionId: string,
    branchId: string,
    retention: CheckpointRetention,
    scope?: TenantScope,
  ): Promise<number> {
    return this.#run('prune checkpoints', () =>
      checkpoints.pruneCheckpoints(this.#context, sessionId, branchId, retention, scope),
    );
  }
  deleteCheckpoint(sessionId: string, branchId: string, id: string, scope?: TenantScope): Promise<boolean> {
    return this.#run('delete a checkpoint', () =>
      checkpoints.deleteCheckpoint(this.#context, sessionId, branchId, id, scope),
    );
  }
  deleteCheckpointsOlderThan(before: string, scope?: TenantScope): Promise<number> {
    return this.#run('delete old checkpoints', () =>
      checkpoints.deleteCheckpointsOlderThan(this.#context, before, scope),
    );
  }

  saveEpisode(episode: Episode): Promise<boolean> {
    return this.#run('save an episode', () => episodes.saveEpisode(this.#context, episode));
  }
  getEpisode(id: string, scope?: TenantScope): Promise<Episode | undefined> {
    return this.#run('read an episode', () => episodes.getEpisode(this.#context, id, scope));
  }
  findEpisodes(filter: EpisodeFilter): Promise<Episode[]> {
    return this.#run('find episodes', () => episodes.findEpisodes(this.#context, filter));
  }
  deleteEpisode(id: string, scope?: TenantScope): Promise<boolean> {
    return this.#run('delete an episode', () => episodes.deleteEpisode(this.#context, id, scope));
  }
  /**
   * Stores an asset in GridFS's format (see `AssetStore.putAsset`): its chunks of 255 KiB, then
   * its files document (`_id` `<sessionId>/<assetId>`, the `AssetRef` as `metadata`), which makes
   * it exist; readable by any GridFS reader too. Within `maxAssetBytes`.
   * @example
   * ```ts
   * const ref = await store.putAsset('chat-81', { name: 'receipt.png', contentType: 'image/png', bytes }, { tenantId: 'acme' });
   * ```
   */
  putAsset(sessionId: string, input: PutAssetInput, scope?: TenantScope): Promise<AssetRef> {
    return this.#run('store an asset', () =>
      assets.putAsset(this.#context, sessionId, input, scope, this.#options.maxAssetBytes),
    );
  }
  /** The asset's reference and bytes, checked against its SHA-256 (a mismatch throws `DocumentCorruptError`). */
  getAsset(sessionId: string, assetId: string, scope?: TenantScope): Promise<StoredAsset | undefined> {
    return this.#run('read an asset', () => assets.getAsset(this.#context, sessionId, assetId, scope));
  }
  listAssets(sessionId: string, scope?: TenantScope): Promise<AssetRef[]> {
    return this.#run('list assets', () => assets.listAssets(this.#context, sessionId, scope));
  }
  deleteAsset(sessionId: string, assetId: string, scope?: TenantScope): Promise<boolean> {
    return this.#run('delete an asset', () => assets.deleteAsset(this.#context, sessionId, assetId, scope));
  }

  eraseUser(input: EraseUserInput): Promise<EraseUserResult> {
    return this.#run("erase a user's data", () => sessions.eraseUser(this.#context, input), true);
  }

  appendEvents(
    sessionId: string,
    branchId: string,
    entries: readonly EventLogEntry[],
    scope: TenantScope = {},
  ): Promise<void> {
    return this.#run('append events', () =>
      branchLogs.appendEvents(this.#context, sessionId, branchId, entries, scope, this.#eventLogEnds),
    );
  }
  readEvents(
    sessionId: string,
    branchId: string,
    options: { after?: EventLogPosition } & TenantScope = {},
  ): Promise<EventLogPage> {
    return this.#run('read events', () =>
      branchLogs.readEvents(this.#context, sessionId, branchId, options.after, scopeOf(options)),
    );
  }
  pruneEvents(
    sessionId: string,
    branchId: string,
    retention: EventLogRetention,
    scope: TenantScope = {},
  ): Promise<number> {
    return this.#run('prune events', () =>
      branchLogs.pruneEvents(this.#context, sessionId, branchId, retention, scope),
    );
  }
  acquireBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
  ): Promise<LeaseAcquisition> {
    return this.#run('take a branch lease', async () => {
      const taken = await branchLogs.acquireLease(this.#context, sessionId, branchId, input);
      // Another process may have written the branch's log since this one last did.
      if (taken.acquired) this.#eventLogEnds.delete(`${sessionId}/${branchId}`);
      return taken;
    });
  }
  renewBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number; ttlMs: number } & TenantScope,
  ): Promise<boolean> {
    return this.#run('renew a branch lease', () =>
      branchLogs.changeHeldLease(this.#context, sessionId, branchId, input),
    );
  }
  releaseBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number } & TenantScope,
  ): Promise<boolean> {
    return this.#run('release a branch lease', () =>
      branchLogs.changeHeldLease(this.#context, sessionId, branchId, {
        owner: input.owner,
        epoch: input.epoch,
        ...scopeOf(input),
      }),
    );
  }
  getBranchLease(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<BranchLease | undefined> {
    return this.#run('read a branch lease', () => branchLogs.getLease(this.#context, sessionId, branchId, scope));
  }
  listExpiredLeases(options: { before: string; limit?: number }): Promise<BranchLease[]> {
    return this.#run('list expired leases', () =>
      branchLogs.listExpiredLeases(this.#context, options.before, options.limit ?? 1000),
    );
  }

  /** Closes the client when the store created it (`{ url }`); a client you passed stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsClient) await withStoreErrors('close its connection', () => this.#client.close());
  }

  /** Runs a store call; `bulk` calls (a migration, an erasure) may run long and get no deadline. */
  #run<T>(action: string, operation: () => Promise<T>, bulk = false): Promise<T> {
    // The common case after init(): the operation's own promise, without an async frame to await init().
    const deadline = bulk ? undefined : this.#options.operationTimeoutMS;
    if (this.#ready && !this.#closed) return withStoreErrors(action, operation, deadline);
    // init() (indexes, and a migration on a first start) has no deadline; the operation has.
    const ready = withStoreErrors(action, async () => {
      if (this.#closed) throw new StoreError(`Cannot ${action}: this MongoStore is closed; create a new one.`);
      await this.init();
    });
    return ready.then(() => withStoreErrors(action, operation, deadline));
  }
}

/** The tenant scope part of an options object. */
function scopeOf(options: TenantScope): TenantScope {
  return options.tenantId === undefined ? {} : { tenantId: options.tenantId };
}
