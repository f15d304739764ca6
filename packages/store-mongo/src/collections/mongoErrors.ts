import { BatonError, DocumentCorruptError, StoreError } from '@baton/core';

/** MongoDB's duplicate-key error code. */
const DUPLICATE_KEY = 11000;

/**
 * The error for a document whose fields disagree with its `_id` (edited or copied by hand): it is
 * not returned, since it may belong to another session.
 * @param document names the document (`'session document "chat-1"'`)
 * @param field the field that disagrees with `_id`
 */
export function misplacedDocument(document: string, field: string, found: unknown): DocumentCorruptError {
  return new DocumentCorruptError(
    `The ${document} holds ${field} ${JSON.stringify(found)}, which does not match its _id; it was not loaded. Restore it from a backup or delete it.`,
    document,
    field,
  );
}

/*
 * Driver errors are recognised by shape (`name`, `code`, `writeErrors`), never by class identity:
 * an app may hand MongoStore a client of its own copy of `mongodb` (another major version, or a
 * second copy in its node_modules), whose error classes are not the ones this package imports.
 */

/** A driver error: an `Error` whose `name` starts with `Mongo` (`MongoServerError`, `MongoNetworkError`, …). */
export function isMongoError(error: unknown): error is Error & { code?: unknown; codeName?: unknown; writeErrors?: unknown } {
  return error instanceof Error && error.name.startsWith('Mongo');
}

/** Whether `error` is a driver error answered by the server with `code` (or `codeName`). */
export function isServerError(error: unknown, code: number, codeName?: string): boolean {
  return isMongoError(error) && (error.code === code || (codeName !== undefined && error.codeName === codeName));
}

/** Whether `error` is a single duplicate-key error (`E11000`), e.g. from `insertOne`. */
export function isDuplicateKeyError(error: unknown): boolean {
  return isMongoError(error) && error.code === DUPLICATE_KEY;
}

/**
 * The indexes (into the inserted array) that failed with a duplicate key in an unordered
 * `insertMany`, or `undefined` when the error is anything else (including a mix of duplicate keys
 * and other failures).
 */
export function duplicateKeyIndexes(error: unknown): number[] | undefined {
  if (!isMongoError(error) || error.name !== 'MongoBulkWriteError') return undefined;
  const raw = error.writeErrors;
  const writeErrors = (Array.isArray(raw) ? raw : [raw]) as Array<{ code?: unknown; index?: unknown }>;
  if (writeErrors.length === 0 || writeErrors.some((w) => w?.code !== DUPLICATE_KEY || typeof w.index !== 'number')) return undefined;
  return writeErrors.map((w) => w.index as number);
}

/**
 * Turns a driver error into a {@link StoreError} (with the driver error as `cause`); Baton errors
 * and programming errors pass through unchanged.
 *
 * @param action what the store was doing, for the message (`'append messages'`)
 */
export function toStoreError(action: string, error: unknown): unknown {
  if (error instanceof BatonError || !isMongoError(error)) return error;
  const lost = isConnectionFailure(error) || isConnectionFailure(error.cause) || /ECONNREFUSED|ECONNRESET|EPIPE|connection .*closed/i.test(error.message);
  const why = lost
    ? 'the MongoDB server is unreachable or the connection was lost. Check the server and the url; the call may be retried (writes are idempotent)'
    : 'the MongoDB server refused the operation';
  return new StoreError(`MongoStore could not ${action}: ${why}. Driver said: ${error.name}: ${error.message}`, { cause: error });
}

/** The driver's names for a lost or unreachable server (`MongoNetworkTimeoutError` is a `MongoNetworkError`). */
const CONNECTION_FAILURES = new Set(['MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoServerSelectionError', 'MongoTopologyClosedError', 'PoolClearedError', 'MongoPoolClearedError']);

function isConnectionFailure(error: unknown): boolean {
  return error instanceof Error && CONNECTION_FAILURES.has(error.name);
}

/**
 * Runs one store operation and converts driver errors with {@link toStoreError}. Not `async`: it
 * returns the operation's own promise with one `catch` (every store call goes through it), and a
 * synchronous throw from `run` becomes a rejection too.
 * @returns a promise of `run`'s result
 * @throws {StoreError} (as a rejection) for any driver failure; Baton errors unchanged
 */
export function withStoreErrors<T>(action: string, run: () => Promise<T>): Promise<T> {
  let result: Promise<T>;
  try {
    result = run();
  } catch (error) {
    return Promise.reject(toStoreError(action, error));
  }
  return result.catch((error: unknown) => {
    throw toStoreError(action, error);
  });
}
