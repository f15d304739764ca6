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
export function isMongoError(
  error: unknown,
): error is Error & { code?: unknown; codeName?: unknown; writeErrors?: unknown } {
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
  if (writeErrors.length === 0 || writeErrors.some((w) => w?.code !== DUPLICATE_KEY || typeof w.index !== 'number'))
    return undefined;
  return writeErrors.map((w) => w.index as number);
}

/** Why a call failed when the server could not be reached or the connection dropped under it. */
const LOST =
  'the MongoDB server is unreachable or the connection was lost. Check the server and the url; the call may be retried (writes are idempotent)';

/**
 * Turns a driver error, or a Node socket error the driver let through (`EPIPE`, `ECONNRESET`, …),
 * into a {@link StoreError} (with the original error as `cause`); Baton errors and programming
 * errors pass through unchanged.
 *
 * @param action what the store was doing, for the message (`'append messages'`)
 */
export function toStoreError(action: string, error: unknown): unknown {
  if (error instanceof BatonError) return error;
  if (isSocketError(error)) {
    // The driver (6.22 and 7.9 alike) passes some socket errors through raw: a write to a connection whose server
    // has just closed it rejects with Node's own `EPIPE` ("This socket has been ended by the other
    // party") rather than a `MongoNetworkError`. It is the same lost connection.
    return new StoreError(`MongoStore could not ${action}: ${LOST}. Socket said: ${error.code}: ${error.message}`, {
      cause: error,
    });
  }
  if (!isMongoError(error)) return error;
  const lost =
    isConnectionFailure(error) ||
    isConnectionFailure(error.cause) ||
    isSocketError(error.cause) ||
    /ECONNREFUSED|ECONNRESET|EPIPE|connection .*closed/i.test(error.message);
  const why = lost ? LOST : 'the MongoDB server refused the operation';
  return new StoreError(`MongoStore could not ${action}: ${why}. Driver said: ${error.name}: ${error.message}`, {
    cause: error,
  });
}

/**
 * Node's codes for a socket that failed under a call: the peer closed or reset it, or it could not
 * be reached. See https://nodejs.org/api/errors.html#common-system-errors and `writeAfterFIN` in
 * Node's `net` module (`EPIPE`).
 */
const SOCKET_FAILURES = new Set([
  'EPIPE',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTCONN',
  'ERR_SOCKET_CLOSED',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

/** A Node socket error (not a driver error) with one of the {@link SOCKET_FAILURES} codes. */
function isSocketError(error: unknown): error is Error & { code: string } {
  if (!(error instanceof Error) || isMongoError(error)) return false;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && SOCKET_FAILURES.has(code);
}

/** The driver's names for a lost or unreachable server (`MongoNetworkTimeoutError` is a `MongoNetworkError`). */
const CONNECTION_FAILURES = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoTopologyClosedError',
  'PoolClearedError',
  'MongoPoolClearedError',
]);

function isConnectionFailure(error: unknown): boolean {
  return error instanceof Error && CONNECTION_FAILURES.has(error.name);
}

/**
 * Runs one store operation and converts driver errors with {@link toStoreError}. Not `async`: it
 * returns the operation's own promise with one `catch` (every store call goes through it), and a
 * synchronous throw from `run` becomes a rejection too.
 *
 * With `deadlineMs`, a call that has not settled by then fails with a {@link StoreError} that says
 * the connection was lost (see `MongoStoreOptions.operationTimeoutMS`); the operation itself is
 * not cancelled (the driver cannot cancel writes) and its late outcome is ignored.
 * @param deadlineMs milliseconds; omit for no deadline
 * @returns a promise of `run`'s result
 * @throws {StoreError} (as a rejection) for any driver failure or a missed deadline; Baton errors unchanged
 */
export function withStoreErrors<T>(action: string, run: () => Promise<T>, deadlineMs?: number): Promise<T> {
  let result: Promise<T>;
  try {
    result = run();
  } catch (error) {
    return Promise.reject(toStoreError(action, error));
  }
  const converted = result.catch((error: unknown) => {
    throw toStoreError(action, error);
  });
  if (deadlineMs === undefined) return converted;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new StoreError(
          `MongoStore could not ${action}: no answer within ${deadlineMs} ms (operationTimeoutMS): ${LOST}.`,
        ),
      );
    }, deadlineMs);
  });
  return Promise.race([converted, late]).finally(() => clearTimeout(timer));
}
