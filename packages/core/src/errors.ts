
/**
 * Baton's error classes, split by who is at fault: the caller's configuration or input
 * (`ConfigurationError`, `InvalidIdError`, …), the model's behaviour (`ModelBehaviorError`), the
 * model provider (`ModelProviderError` and its subclasses), or the system (`StoreError`,
 * `ConcurrencyError`, `CheckpointCorruptError`). Every error has a stable `code` and keeps the
 * underlying `cause`.
 *
 * @example
 * ```ts
 * import { BatonError, ConcurrencyError } from '@baton/core';
 * try { await store.updateSession(id, change, { expectedVersion: 3 }); }
 * catch (error) { if (error instanceof ConcurrencyError) retry(); else throw error; }
 * ```
 */

/** Every error code Baton throws, one per error class. */
export const BatonErrorCode = {
  CONFIGURATION: 'CONFIGURATION',
  INVALID_ID: 'INVALID_ID',
  INVALID_INPUT: 'INVALID_INPUT',
  NOT_FOUND: 'NOT_FOUND',
  CONCURRENCY: 'CONCURRENCY',
  CHECKPOINT_CORRUPT: 'CHECKPOINT_CORRUPT',
  DOCUMENT_CORRUPT: 'DOCUMENT_CORRUPT',
  STORE: 'STORE',
  MODEL_BEHAVIOR: 'MODEL_BEHAVIOR',
  OUTPUT_VALIDATION: 'OUTPUT_VALIDATION',
  MODEL_PROVIDER: 'MODEL_PROVIDER',
  RATE_LIMIT: 'RATE_LIMIT',
  AUTHENTICATION: 'AUTHENTICATION',
  BAD_REQUEST: 'BAD_REQUEST',
  TIMEOUT: 'TIMEOUT',
  MAX_STEPS: 'MAX_STEPS',
  ABORTED: 'ABORTED',
  SESSION_CLOSED: 'SESSION_CLOSED',
  BRANCH_HAS_CHILDREN: 'BRANCH_HAS_CHILDREN',
  AMBIGUOUS_BRANCH: 'AMBIGUOUS_BRANCH',
  REMOTE_EXECUTOR: 'REMOTE_EXECUTOR',
  CHECKPOINT_IN_USE: 'CHECKPOINT_IN_USE',
  UNSUPPORTED_SCHEMA_VERSION: 'UNSUPPORTED_SCHEMA_VERSION',
  ASSET_TOO_LARGE: 'ASSET_TOO_LARGE',
} as const;

/** One of {@link BatonErrorCode}'s values. */
export type BatonErrorCode = (typeof BatonErrorCode)[keyof typeof BatonErrorCode];

/** Options every Baton error accepts. */
export interface BatonErrorOptions {
  /** The error that caused this one (kept on `error.cause`). */
  cause?: unknown;
}

/**
 * The abstract base of every error Baton throws. `name` is the subclass name, `code` a stable
 * {@link BatonErrorCode}.
 */
export abstract class BatonError extends Error {
  abstract readonly code: BatonErrorCode;
  override readonly name: string;

  constructor(message: string, options: BatonErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/** The caller configured something that cannot work (a missing coordinator, an unknown agent, …). */
export class ConfigurationError extends BatonError {
  readonly code = BatonErrorCode.CONFIGURATION;
}

/**
 * An id (session, branch, tenant, user, checkpoint, episode) is not of the allowed form: 1–128
 * characters of `A–Z a–z 0–9 _ - : .`, not starting with `.` or `-`, so it can never name a path
 * (`../x`, `a/b`) or a query operator (`$gt`).
 */
export class InvalidIdError extends BatonError {
  readonly code = BatonErrorCode.INVALID_ID;
  constructor(
    readonly kind: string,
    readonly value: unknown,
    options: BatonErrorOptions = {},
  ) {
    super(
      `Invalid ${kind} id ${JSON.stringify(value)}: use 1-128 characters of letters, digits, "_", "-", ":" or ".", not starting with "." or "-".`,
      options,
    );
  }
}

/** Input from the caller failed validation (a message, metadata with `$` keys, a bad option). */
export class InvalidInputError extends BatonError {
  readonly code = BatonErrorCode.INVALID_INPUT;
}

/**
 * Metadata or state nested deeper than a store keeps (`MAX_METADATA_DEPTH` levels): an
 * {@link InvalidInputError} (same `code`, so a server answers 400) that names the field and the limit.
 * Refused before anything walks or copies the value, so deep input never overflows the stack.
 *
 * @example
 * ```ts
 * import { NestingTooDeepError } from '@baton/core';
 * try { await store.createSession({ id: 's-1', metadata: deep }); }
 * catch (error) { if (error instanceof NestingTooDeepError) console.log(error.field, error.limit); }
 * ```
 */
export class NestingTooDeepError extends InvalidInputError {
  constructor(
    /** The field, as the message names it (`'session.metadata'`). */
    readonly field: string,
    /** The deepest nesting allowed, in levels of objects and arrays. */
    readonly limit: number,
    options: BatonErrorOptions = {},
  ) {
    super(`${field} is nested more than ${limit} levels deep (objects and arrays within each other); flatten it to at most ${limit} levels.`, options);
  }
}

/** A session, branch, checkpoint, request or episode that the caller named does not exist. */
export class NotFoundError extends BatonError {
  readonly code = BatonErrorCode.NOT_FOUND;
}

/**
 * A write lost a race: the stored `version` is not the `expectedVersion`, or another writer holds
 * the session. Reload and retry.
 */
export class ConcurrencyError extends BatonError {
  readonly code = BatonErrorCode.CONCURRENCY;
}

/** A stored checkpoint cannot be parsed or fails its schema. Nothing is loaded from it. */
export class CheckpointCorruptError extends BatonError {
  readonly code = BatonErrorCode.CHECKPOINT_CORRUPT;
}

/** The store failed (I/O error, lost database connection). The write may be retried: writes are idempotent. */
export class StoreError extends BatonError {
  readonly code: BatonErrorCode = BatonErrorCode.STORE;
}

/**
 * A stored session, branch, message or episode fails the rules its write had to pass (its schema,
 * id rules, ISO-8601 timestamps, metadata keys): it was damaged or written by something else.
 * Nothing is returned from it, and retrying does not help: restore the document from a backup.
 * A `StoreError` (code `DOCUMENT_CORRUPT`), so code that catches store failures catches it too.
 *
 * @example
 * ```ts
 * import { DocumentCorruptError } from '@baton/core';
 * try { await store.getSession('chat-1'); }
 * catch (error) { if (error instanceof DocumentCorruptError) console.error(error.document, error.field); }
 * ```
 */
export class DocumentCorruptError extends StoreError {
  override readonly code = BatonErrorCode.DOCUMENT_CORRUPT;
  /**
   * @param message the whole sentence, naming the document and the field
   * @param document which document (`'session "chat-1"'`, a file path)
   * @param field the path of the first bad field (`'createdAt'`, `'metadata.a'`, `'(root)'`)
   */
  constructor(
    message: string,
    readonly document: string,
    readonly field: string,
    options: BatonErrorOptions = {},
  ) {
    super(message, options);
  }
}

/**
 * A record (line) of a `FileStore` session log is damaged: its CRC-32C checksum does not match its
 * bytes, it is not JSON, or it contradicts the records before it. Says which record (`record`: its
 * line number, the header being 1; `offset`: the byte where it starts) and what is intact: the
 * records before it, which hold each branch's messages through `intactThroughSeq[branchId]` (known
 * when the call read the log up to the record; `undefined` when it read only part of it: run
 * `FileStore.verify`). `FileStore.repair` (`baton store repair`) keeps those records and moves the
 * damaged log aside; or restore the file from a backup. A `DocumentCorruptError` (code `DOCUMENT_CORRUPT`).
 *
 * @example
 * ```ts
 * import { LogRecordCorruptError } from '@baton/core';
 * try { await store.readMessages('chat-1', 'main'); }
 * catch (error) { if (error instanceof LogRecordCorruptError) console.error(error.record, error.offset, error.intactThroughSeq); }
 * ```
 */
export class LogRecordCorruptError extends DocumentCorruptError {
  /**
   * @param message the whole sentence, naming the file, the record and what to do
   * @param file the session log's path
   * @param record the damaged record's line number in the file (1 = the header)
   * @param offset the byte offset in the file where the damaged record (or the damaged bytes a
   *   ranged read found) starts
   * @param intactThroughSeq per branch id, the last seq the records before it hold (`undefined` when not known)
   */
  constructor(
    message: string,
    readonly file: string,
    readonly record: number,
    readonly offset: number,
    readonly intactThroughSeq: Readonly<Record<string, number>> | undefined,
    options: BatonErrorOptions & { field?: string } = {},
  ) {
    super(message, `line ${record} of ${file}`, options.field ?? '(root)', options);
  }
}

/**
 * A stored document (session, branch, message, episode or checkpoint) has a `schemaVersion` newer
 * than this code knows: it was written by a newer Baton. Nothing is returned from it (reading it
 * with the older rules could silently drop or misread fields); upgrade the package that reads it.
 * A `StoreError` (code `UNSUPPORTED_SCHEMA_VERSION`), so code that catches store failures catches it too.
 *
 * @example
 * ```ts
 * import { UnsupportedSchemaVersionError } from '@baton/core';
 * try { await store.getSession('chat-1'); }
 * catch (error) { if (error instanceof UnsupportedSchemaVersionError) console.error(error.kind, error.version, error.supported); }
 * ```
 */
export class UnsupportedSchemaVersionError extends StoreError {
  override readonly code = BatonErrorCode.UNSUPPORTED_SCHEMA_VERSION;
  /**
   * @param kind the document kind (`'session'`, `'branch'`, `'message'`, `'episode'`, `'checkpoint'`)
   * @param version the `schemaVersion` the document has
   * @param supported the newest version this code reads
   * @param document which document (`'session document "chat-1"'`, a file path)
   */
  constructor(
    readonly kind: string,
    readonly version: number,
    readonly supported: number,
    readonly document: string,
    options: BatonErrorOptions = {},
  ) {
    super(
      `The ${document} is a ${kind} of schemaVersion ${version}, but this version of @baton/core reads ${kind}s up to schemaVersion ${supported}: it was written by a newer Baton. Upgrade @baton/core (and the store package) to read it; it was not loaded.`,
      options,
    );
  }
}

/** The model did something the protocol does not allow and that cannot be answered with a tool error. */
export class ModelBehaviorError extends BatonError {
  readonly code: BatonErrorCode = BatonErrorCode.MODEL_BEHAVIOR;
}

/**
 * An agent with an `outputType` answered with text that is not JSON satisfying its schema, and
 * again after it was told what was wrong (one retry). A `ModelBehaviorError` (code `OUTPUT_VALIDATION`).
 *
 * @example
 * ```ts
 * import { OutputValidationError } from '@baton/core';
 * try { await workflow.run('Summarise the refund'); }
 * catch (error) { if (error instanceof OutputValidationError) console.log(error.agent, error.issues, error.output); }
 * ```
 */
export class OutputValidationError extends ModelBehaviorError {
  override readonly code = BatonErrorCode.OUTPUT_VALIDATION;
  /**
   * @param agent the agent whose answer failed
   * @param output the model's last answer, as it wrote it
   * @param issues what was wrong with it (JSON syntax, or the schema's issues by path)
   */
  constructor(
    readonly agent: string,
    readonly output: string,
    readonly issues: string,
    options: BatonErrorOptions = {},
  ) {
    super(
      `Agent ${JSON.stringify(agent)} answered twice with output that does not satisfy its outputType (${issues}); last answer ${JSON.stringify(output.slice(0, 200))}. Tighten its instructions or the schema.`,
      options,
    );
  }
}

/** An agent ran out of steps (`maxSteps` model calls in one activation). */
export class MaxStepsExceededError extends BatonError {
  readonly code = BatonErrorCode.MAX_STEPS;
}

/** The operation was cancelled through its `AbortSignal`. */
export class AbortedError extends BatonError {
  readonly code = BatonErrorCode.ABORTED;
}

/**
 * An asset (a file a user uploaded to a session) is larger than the store accepts: `limit` is the
 * store's `maxAssetBytes` (or, for `InMemoryStore`, the room left under `maxAssetBytesTotal`), in
 * bytes. Nothing of the asset is stored.
 *
 * @example
 * ```ts
 * try { await store.putAsset!('chat-1', { name: 'scan.pdf', contentType: 'application/pdf', bytes }); }
 * catch (error) { if (error instanceof AssetTooLargeError) console.log(`at most ${error.limit} bytes`); }
 * ```
 */
export class AssetTooLargeError extends BatonError {
  readonly code = BatonErrorCode.ASSET_TOO_LARGE;
  constructor(
    message: string,
    /** The most bytes the store accepts for this asset. */
    readonly limit: number,
    options: BatonErrorOptions = {},
  ) {
    super(message, options);
  }
}

/** The session is closed; it accepts no more turns. */
export class SessionClosedError extends BatonError {
  readonly code = BatonErrorCode.SESSION_CLOSED;
}

/** Options of {@link ModelProviderError}. */
export interface ModelProviderErrorOptions extends BatonErrorOptions {
  /** The HTTP status the provider answered with, when there was one. */
  status?: number;
  /** The provider's request id, for support tickets. */
  requestId?: string;
}

/** The model provider failed the call (after the client's own retries). */
export class ModelProviderError extends BatonError {
  readonly code: BatonErrorCode = BatonErrorCode.MODEL_PROVIDER;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  constructor(message: string, options: ModelProviderErrorOptions = {}) {
    super(message, options);
    this.status = options.status;
    this.requestId = options.requestId;
  }
}

/** HTTP 429 from the provider after retries were exhausted. */
export class RateLimitError extends ModelProviderError {
  override readonly code = BatonErrorCode.RATE_LIMIT;
}

/** HTTP 401/403: the API key is missing, wrong or lacks permission. */
export class AuthenticationError extends ModelProviderError {
  override readonly code = BatonErrorCode.AUTHENTICATION;
}

/** HTTP 400/404/422: the provider rejected the request (unknown model, bad parameters). */
export class BadRequestError extends ModelProviderError {
  override readonly code = BatonErrorCode.BAD_REQUEST;
}

/** The provider did not answer in time (after retries). */
export class TimeoutError extends ModelProviderError {
  override readonly code = BatonErrorCode.TIMEOUT;
}

/** Whether `value` is a {@link BatonError}. */
export function isBatonError(value: unknown): value is BatonError {
  return value instanceof BatonError;
}

/** A branch cannot be deleted because forks refer to it; pass `{ recursive: true }` to delete them too. */
export class BranchHasChildrenError extends BatonError {
  readonly code = BatonErrorCode.BRANCH_HAS_CHILDREN;
}

/**
 * A checkpoint cannot be deleted because a paused turn stands on it: it is its branch's newest, and
 * its pending requests and finished tool results are what a resume needs. Delete older checkpoints,
 * or let the turn finish first.
 *
 * @example
 * ```ts
 * try { await store.deleteCheckpoint('chat-1', 'main', newest.id); }
 * catch (error) { if (error instanceof CheckpointInUseError) console.log(error.checkpointId); }
 * ```
 */
export class CheckpointInUseError extends BatonError {
  readonly code = BatonErrorCode.CHECKPOINT_IN_USE;
  constructor(
    readonly checkpointId: string,
    readonly branchId: string,
    options: BatonErrorOptions = {},
  ) {
    super(
      `Checkpoint ${JSON.stringify(checkpointId)} is the newest of branch ${JSON.stringify(branchId)}: a paused turn resumes from it, so it cannot be deleted. Delete an older checkpoint, or finish the turn first.`,
      options,
    );
  }
}

/**
 * A session with several branches was opened without naming one: Baton does not guess which
 * conversation the caller means. `branches` lists the ids to choose from.
 *
 * @example
 * ```ts
 * try { await workflow.session({ id }); }
 * catch (error) { if (error instanceof AmbiguousBranchError) await workflow.session({ id, branch: error.branches[0] }); }
 * ```
 */
export class AmbiguousBranchError extends BatonError {
  readonly code = BatonErrorCode.AMBIGUOUS_BRANCH;
  constructor(
    readonly sessionId: string,
    readonly branches: readonly string[],
    options: BatonErrorOptions = {},
  ) {
    super(
      `Session ${JSON.stringify(sessionId)} has ${branches.length} branches (${branches.map((b) => JSON.stringify(b)).join(', ')}); open it with { branch } naming one of them.`,
      options,
    );
  }
}

/** Why a {@link RemoteExecutorError} was thrown. */
export type RemoteFailure = 'status' | 'timeout' | 'network' | 'protocol';

/** Options of {@link RemoteExecutorError}. */
export interface RemoteExecutorErrorOptions extends BatonErrorOptions {
  /** What failed: an HTTP status, the time limit, the connection, or the answer's format. */
  failure: RemoteFailure;
  /** The service's URL. */
  url: string;
  /** The HTTP status the service answered with, when there was one. */
  status?: number;
  /** Attempts made (1 + retries). */
  attempts: number;
}

/**
 * A `RemoteExecutor`'s service failed the step (after its retries): it answered with an error
 * status, did not answer in time, could not be reached, or answered with a line that is not the
 * wire format. The turn fails with it; what the turn committed before stays stored.
 *
 * @example
 * ```ts
 * import { RemoteExecutorError } from '@baton/core';
 * try { for await (const _ of session.send('hi')) {} }
 * catch (error) { if (error instanceof RemoteExecutorError && error.failure === 'timeout') console.log(error.url); }
 * ```
 */
export class RemoteExecutorError extends BatonError {
  readonly code = BatonErrorCode.REMOTE_EXECUTOR;
  readonly failure: RemoteFailure;
  readonly url: string;
  readonly status: number | undefined;
  readonly attempts: number;
  constructor(message: string, options: RemoteExecutorErrorOptions) {
    super(message, options);
    this.failure = options.failure;
    this.url = options.url;
    this.status = options.status;
    this.attempts = options.attempts;
  }
}
