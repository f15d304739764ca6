import {
  type AssetRef,
  type Branch,
  type BranchLease,
  ConfigurationError,
  type Episode,
  type EventLogPosition,
  type Message,
  type PendingWrite,
  type Session,
} from '@baton/core';
import type { Collection, Db, IndexDescription, ObjectId } from 'mongodb';
import type { ResolvedMongoStoreOptions } from '../mongoStoreOptions.js';
import { isServerError } from './mongoErrors.js';

/** The last update a compare-and-set write applied, so a retry whose first attempt landed is recognised. */
export interface LastChange {
  version: number;
  digest: string;
}

/** A session document: the session, `_id` = session id. */
export type SessionDoc = Session & { _id: string; order: ObjectId; lastChange?: LastChange; schemaVersion?: number };
/** A message document: `_id` = `<sessionId>/<branchId>/<seq>`; `tenantId` is the session's (absent without one). */
export type MessageDoc = Message & {
  _id: string;
  sessionId: string;
  branchId: string;
  tenantId?: string;
  schemaVersion?: number;
};
/** A branch document: `_id` = `<sessionId>/<branchId>`; `tenantId` is the session's (absent without one). */
export type BranchDoc = Branch & {
  _id: string;
  order: ObjectId;
  lastChange?: LastChange;
  tenantId?: string;
  schemaVersion?: number;
};
/**
 * A checkpoint document: the manifest fields for queries, the checkpoint itself as JSON text in
 * `body` (its routing snapshot may hold keys MongoDB would read as operators), `_id` =
 * `<sessionId>/<branchId>/<id>`.
 */
export interface CheckpointDoc {
  _id: string;
  sessionId: string;
  branchId: string;
  /** The session's tenant (absent without one). */
  tenantId?: string;
  id: string;
  parentId: string | null;
  step: number;
  throughSeq: number;
  createdAt: string;
  /** `createdAt` as a Date, for the optional TTL index. */
  createdDate: Date;
  /** Insertion order among checkpoints with the same `createdAt`. */
  order: ObjectId;
  body: string;
  /**
   * Whether `putPendingWrites` may have added pending writes to this checkpoint: `false` when it was
   * saved, set to `true` before the first later write is inserted, so a load reads `pendingWrites`
   * only when there can be some. Absent in documents saved by older versions (read as "maybe").
   */
  pendingWritesAdded?: boolean;
}
/** A pending write added after its checkpoint was saved: `_id` = JSON of `[sessionId, branchId, checkpointId, toolCallId]`. */
export interface PendingWriteDoc {
  _id: string;
  sessionId: string;
  branchId: string;
  /** The session's tenant (absent without one). */
  tenantId?: string;
  checkpointId: string;
  toolCallId: string;
  write: PendingWrite;
  checkpointCreatedAt: string;
  createdDate: Date;
  order: ObjectId;
}
/**
 * A claim on one version of a session or branch (`_id` = `<kind>/<doc _id>/<version>`): inserted
 * before a compare-and-set update on servers whose conditional updates are not atomic (FerretDB),
 * so that of two writers from the same version only the one whose insert wins may update.
 */
export interface VersionClaimDoc {
  _id: string;
  sessionId: string;
  branchId?: string;
  /** `<kind>/<doc _id>`: whose claims a sweep deletes. */
  target: string;
  /** The claimed version. */
  version: number;
  digest: string;
  /** The update's `$set` as JSON, so another writer can complete it when the claimant died (absent in claims of older versions). */
  change?: string;
  /** When the claim was made (the claimant's clock). */
  at: Date;
}
/** An episode document: `_id` = episode id. */
export type EpisodeDoc = Episode & { _id: string; order: ObjectId; schemaVersion?: number };
/**
 * An asset's GridFS files document (collection `<prefix>assets.files`): `_id` =
 * `<sessionId>/<assetId>`, GridFS's `length`, `chunkSize`, `uploadDate` and `filename`, the
 * `AssetRef` as `metadata`, and the session and tenant ids for filters and a shard key.
 */
export interface AssetFileDoc {
  _id: string;
  length: number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
  metadata: AssetRef;
  sessionId: string;
  tenantId?: string;
}
/** One GridFS chunk of an asset (`<prefix>assets.chunks`): `_id` = `<sessionId>/<assetId>/<n>`, with the session and tenant ids. */
export interface AssetChunkDoc {
  _id: string;
  files_id: string;
  n: number;
  data: Uint8Array;
  sessionId: string;
  tenantId?: string;
}
/**
 * The store's own bookkeeping (`_id` = what it records): `{ _id: 'formats', tenantFields: true }`
 * once the documents of version 1 have their session's tenant id (see `migrateTenantFields`).
 */
export interface MetaDoc {
  _id: string;
  tenantFields?: boolean;
  at?: Date;
}

/**
 * One batch of a branch's event log (`appendEvents`): `_id` = `<sessionId>/<branchId>/<last>`,
 * `last` the batch's last position as a sortable key (`eventLogKey`), the entries as JSON in `body`.
 */
export interface EventBatchDoc {
  _id: string;
  sessionId: string;
  branchId: string;
  tenantId?: string;
  last: string;
  after: EventLogPosition;
  body: string;
  count: number;
  /** ms since the epoch, for retention; `createdDate` the same as a Date. */
  createdAt: number;
  createdDate: Date;
}
/** A branch's lease: `_id` = `<sessionId>/<branchId>`. */
export type BranchLeaseDoc = BranchLease & { _id: string };

/** Baton's collections. */
export interface MongoCollections {
  sessions: Collection<SessionDoc>;
  messages: Collection<MessageDoc>;
  branches: Collection<BranchDoc>;
  checkpoints: Collection<CheckpointDoc>;
  pendingWrites: Collection<PendingWriteDoc>;
  versionClaims: Collection<VersionClaimDoc>;
  episodes: Collection<EpisodeDoc>;
  meta: Collection<MetaDoc>;
  /** GridFS files documents of assets (the bucket `<prefix>assets`). */
  assetFiles: Collection<AssetFileDoc>;
  /** GridFS chunks of assets. */
  assetChunks: Collection<AssetChunkDoc>;
  /** Event log batches (see {@link EventBatchDoc}). */
  eventLog: Collection<EventBatchDoc>;
  /** Branch leases. */
  branchLeases: Collection<BranchLeaseDoc>;
}

/** The collection names for a prefix (`'baton_'` → `baton_sessions`, …). */
export function collectionNames(prefix: string): Record<keyof MongoCollections, string> {
  return {
    sessions: `${prefix}sessions`,
    messages: `${prefix}messages`,
    branches: `${prefix}branches`,
    checkpoints: `${prefix}checkpoints`,
    pendingWrites: `${prefix}pendingWrites`,
    versionClaims: `${prefix}versionClaims`,
    episodes: `${prefix}episodes`,
    meta: `${prefix}meta`,
    assetFiles: `${prefix}assets.files`,
    assetChunks: `${prefix}assets.chunks`,
    eventLog: `${prefix}eventLog`,
    branchLeases: `${prefix}branchLeases`,
  };
}

/** Opens the collections (no I/O). `undefined` fields are left out of stored documents. */
export function openCollections(db: Db, prefix: string): MongoCollections {
  const names = collectionNames(prefix);
  const options = { ignoreUndefined: true };
  return {
    sessions: db.collection<SessionDoc>(names.sessions, options),
    messages: db.collection<MessageDoc>(names.messages, options),
    branches: db.collection<BranchDoc>(names.branches, options),
    checkpoints: db.collection<CheckpointDoc>(names.checkpoints, options),
    pendingWrites: db.collection<PendingWriteDoc>(names.pendingWrites, options),
    versionClaims: db.collection<VersionClaimDoc>(names.versionClaims, options),
    episodes: db.collection<EpisodeDoc>(names.episodes, options),
    meta: db.collection<MetaDoc>(names.meta, options),
    assetFiles: db.collection<AssetFileDoc>(names.assetFiles, options),
    assetChunks: db.collection<AssetChunkDoc>(names.assetChunks, options),
    eventLog: db.collection<EventBatchDoc>(names.eventLog, options),
    branchLeases: db.collection<BranchLeaseDoc>(names.branchLeases, options),
  };
}

/**
 * Creates every index Baton needs (idempotent). One `createIndexes` command per index: FerretDB
 * 1.24 drops the connection when one command re-creates several existing indexes.
 * @throws {ConfigurationError} when `checkpointTtlSeconds` is set and the server has no TTL indexes
 */
export async function createIndexes(collections: MongoCollections, options: ResolvedMongoStoreOptions): Promise<void> {
  const unique = !options.sharded;
  const specs: [Pick<Collection, 'createIndexes'>, IndexDescription][] = [
    [collections.sessions, { key: { tenantId: 1, userId: 1, lastActivityAt: -1 }, name: 'tenant_user_activity' }],
    [collections.sessions, { key: { lastActivityAt: 1 }, name: 'activity' }],
    [collections.messages, { key: { sessionId: 1, branchId: 1, seq: 1 }, name: 'session_branch_seq', unique }],
    [collections.branches, { key: { sessionId: 1, id: 1 }, name: 'session_branch', unique }],
    [
      collections.checkpoints,
      { key: { sessionId: 1, branchId: 1, createdAt: 1, order: 1 }, name: 'session_branch_created' },
    ],
    [collections.checkpoints, { key: { sessionId: 1, branchId: 1, id: 1 }, name: 'session_branch_id', unique }],
    [
      collections.pendingWrites,
      {
        key: { sessionId: 1, branchId: 1, checkpointId: 1, toolCallId: 1 },
        name: 'session_branch_checkpoint_call',
        unique,
      },
    ],
    [collections.versionClaims, { key: { sessionId: 1, branchId: 1 }, name: 'session_branch' }],
    [collections.episodes, { key: { tenantId: 1, userId: 1, endedAt: -1 }, name: 'tenant_user_ended' }],
    // GridFS's own indexes (any GridFS reader expects them), and the session's assets in upload order.
    [collections.assetChunks, { key: { files_id: 1, n: 1 }, name: 'files_id_1_n_1', unique }],
    [collections.assetChunks, { key: { sessionId: 1 }, name: 'session' }],
    [collections.assetFiles, { key: { filename: 1, uploadDate: 1 }, name: 'filename_1_uploadDate_1' }],
    [collections.assetFiles, { key: { sessionId: 1, uploadDate: 1 }, name: 'session_uploaded' }],
    [collections.eventLog, { key: { sessionId: 1, branchId: 1, last: 1 }, name: 'session_branch_last' }],
    [collections.branchLeases, { key: { held: 1, expiresAt: 1 }, name: 'held_expires' }],
  ];
  await Promise.all(specs.map(([collection, spec]) => collection.createIndexes([spec])));
  const ttl = options.checkpointTtlSeconds;
  if (ttl === undefined) return;
  try {
    await collections.checkpoints.createIndex({ createdDate: 1 }, { name: 'checkpoint_ttl', expireAfterSeconds: ttl });
    await collections.pendingWrites.createIndex(
      { createdDate: 1 },
      { name: 'pending_write_ttl', expireAfterSeconds: ttl },
    );
  } catch (cause) {
    if (!isServerError(cause, 238, 'NotImplemented')) throw cause;
    const text = (cause as Error).message;
    throw new ConfigurationError(
      `MongoStore checkpointTtlSeconds (${ttl}) needs TTL indexes, which this server does not support (${text}). Remove the option and call deleteCheckpointsOlderThan on a schedule instead.`,
      { cause },
    );
  }
}
