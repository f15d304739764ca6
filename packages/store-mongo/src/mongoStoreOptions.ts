import { ConfigurationError } from '@baton/core';
import { assertMaxAssetBytes } from '@baton/core/store-kit';
import type { MongoClient, MongoClientOptions } from 'mongodb';

/**
 * How a {@link MongoStore} reaches MongoDB: a connection string (the store creates, owns and closes
 * the client) or a client you created (the store never closes it).
 */
export type MongoStoreConnection =
  | {
      /**
       * A MongoDB connection string, e.g. `mongodb://127.0.0.1:27017/`. `undefined` is accepted so
       * that `{ url: process.env.MONGODB_URL }` type-checks; it throws a ConfigurationError at construction.
       */
      url: string | undefined;
      /** Extra driver options; `serverSelectionTimeoutMS` defaults to {@link MongoStoreOptions.serverSelectionTimeoutMS}. */
      clientOptions?: MongoClientOptions;
    }
  | {
      /** A client you own; `store.close()` leaves it open. */
      client: MongoClient;
    };

/** Options of {@link MongoStore}. */
export interface MongoStoreOptions {
  /** The database holding Baton's collections. Default `'baton'`. Letters, digits, `_` and `-`, at most 63 characters. */
  dbName?: string;
  /** Prepended to every collection name (`'<prefix>messages'`, …). Default `'baton_'`. Letters, digits and `_`, at most 40 characters. */
  collectionPrefix?: string;
  /**
   * Retention by age: when set, checkpoints (and their pending writes) are removed by MongoDB's TTL
   * monitor this many seconds after their `createdAt`, newest included. Needs a server with TTL
   * indexes (MongoDB; FerretDB 1.x has none: `init()` then throws a {@link ConfigurationError}).
   */
  checkpointTtlSeconds?: number;
  /**
   * Set for a cluster sharded on `{ sessionId: 'hashed' }`: the compound indexes are created without
   * `unique`, which MongoDB refuses on hashed-sharded collections. Idempotency does not depend on
   * them: every message, branch, checkpoint and pending write has a deterministic `_id` that starts
   * with its session id, so duplicates always meet on one shard. Default `false`.
   */
  sharded?: boolean;
  /**
   * How long the driver looks for a server before an operation fails with a `StoreError`, in
   * milliseconds. Default 5,000. Used only with `{ url }`.
   */
  serverSelectionTimeoutMS?: number;
  /**
   * The longest one store call may take, in milliseconds, before it fails with a `StoreError` that
   * says the server is unreachable or the connection was lost. Default 30,000. Used with `{ url }`
   * and `{ client }`, for every call but the bulk ones (`migrate`, `eraseUser`) and `init`/`close`.
   * It guards against a driver that never answers: the MongoDB Node driver (6.x and 7.x) waits
   * forever for a `drain` event when it writes a command to a socket the server closed a moment
   * before, so without a deadline such a call would never settle. As with any lost connection, the
   * operation may still complete after the deadline; every write is idempotent and may be retried.
   * Anything but a positive whole number is a `ConfigurationError` from the constructor.
   */
  operationTimeoutMS?: number;
  /**
   * How session and branch updates compare-and-set their `version`: `false` with one atomic
   * `findOneAndUpdate` (MongoDB); `true` by first inserting a version claim (needed on FerretDB 1.x,
   * whose conditional updates are not atomic; one more round trip per update, plus a delete of the
   * document's old claims every 16th version; a claim whose writer died before its update is
   * completed by the next writer after a 1 s lease); `'auto'` (default) asks the server's
   * `buildInfo` and claims on FerretDB.
   */
  versionClaims?: 'auto' | boolean;
  /** How many sessions' branch lists the store keeps in memory (so a turn needs no extra reads). Default 10,000. */
  branchCacheSize?: number;
  /** The largest asset `putAsset` accepts, in bytes (default 25 MiB); larger ones throw `AssetTooLargeError`. */
  maxAssetBytes?: number;
}

/** {@link MongoStoreOptions} with defaults applied. */
export interface ResolvedMongoStoreOptions {
  dbName: string;
  collectionPrefix: string;
  checkpointTtlSeconds: number | undefined;
  sharded: boolean;
  serverSelectionTimeoutMS: number;
  operationTimeoutMS: number;
  branchCacheSize: number;
  versionClaims: 'auto' | boolean;
  maxAssetBytes: number;
}

const DB_NAME = /^[A-Za-z0-9_-]{1,63}$/;
const PREFIX = /^[A-Za-z0-9_]{0,40}$/;

/**
 * Applies defaults and checks every option.
 * @throws {ConfigurationError} naming the bad option and its value
 */
export function resolveMongoStoreOptions(options: MongoStoreOptions): ResolvedMongoStoreOptions {
  const dbName = options.dbName ?? 'baton';
  if (typeof dbName !== 'string' || !DB_NAME.test(dbName)) {
    throw new ConfigurationError(
      `MongoStore dbName ${JSON.stringify(dbName)} is not allowed: use 1-63 letters, digits, "_" or "-".`,
    );
  }
  const collectionPrefix = options.collectionPrefix ?? 'baton_';
  if (typeof collectionPrefix !== 'string' || !PREFIX.test(collectionPrefix)) {
    throw new ConfigurationError(
      `MongoStore collectionPrefix ${JSON.stringify(collectionPrefix)} is not allowed: use up to 40 letters, digits or "_".`,
    );
  }
  const ttl = options.checkpointTtlSeconds;
  if (ttl !== undefined && !(Number.isInteger(ttl) && ttl > 0)) {
    throw new ConfigurationError(
      `MongoStore checkpointTtlSeconds must be a positive whole number of seconds, not ${JSON.stringify(ttl)}.`,
    );
  }
  const serverSelectionTimeoutMS = options.serverSelectionTimeoutMS ?? 5000;
  if (!(Number.isInteger(serverSelectionTimeoutMS) && serverSelectionTimeoutMS > 0)) {
    throw new ConfigurationError(
      `MongoStore serverSelectionTimeoutMS must be a positive whole number of milliseconds, not ${JSON.stringify(serverSelectionTimeoutMS)}.`,
    );
  }
  const operationTimeoutMS = options.operationTimeoutMS ?? 30_000;
  if (!(Number.isInteger(operationTimeoutMS) && operationTimeoutMS > 0)) {
    throw new ConfigurationError(
      `MongoStore operationTimeoutMS must be a positive whole number of milliseconds, not ${JSON.stringify(operationTimeoutMS)}.`,
    );
  }
  const branchCacheSize = options.branchCacheSize ?? 10_000;
  if (!(Number.isInteger(branchCacheSize) && branchCacheSize >= 0)) {
    throw new ConfigurationError(
      `MongoStore branchCacheSize must be a whole number >= 0, not ${JSON.stringify(branchCacheSize)}.`,
    );
  }
  const versionClaims = options.versionClaims ?? 'auto';
  if (versionClaims !== 'auto' && typeof versionClaims !== 'boolean') {
    throw new ConfigurationError(
      `MongoStore versionClaims must be 'auto', true or false, not ${JSON.stringify(versionClaims)}.`,
    );
  }
  const maxAssetBytes = assertMaxAssetBytes('MongoStore', options.maxAssetBytes);
  return {
    dbName,
    collectionPrefix,
    checkpointTtlSeconds: ttl,
    sharded: options.sharded ?? false,
    serverSelectionTimeoutMS,
    operationTimeoutMS,
    branchCacheSize,
    versionClaims,
    maxAssetBytes,
  };
}
