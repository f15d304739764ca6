/**
 * Errors that are the caller's fault: configuration, ids, input, names of things that do not exist,
 * oversized assets, cancellation.
 */
import { BatonErrorCode, BatonError, type BatonErrorOptions } from './batonError.js';

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
    super(
      `${field} is nested more than ${limit} levels deep (objects and arrays within each other); flatten it to at most ${limit} levels.`,
      options,
    );
  }
}

/** A session, branch, checkpoint, request or episode that the caller named does not exist. */
export class NotFoundError extends BatonError {
  readonly code = BatonErrorCode.NOT_FOUND;
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

/** The operation was cancelled through its `AbortSignal`. */
export class AbortedError extends BatonError {
  readonly code = BatonErrorCode.ABORTED;
}
