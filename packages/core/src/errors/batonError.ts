/** The base of Baton's errors: {@link BatonError}, its stable codes and {@link isBatonError}. */

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
  CONTEXT_LENGTH_EXCEEDED: 'CONTEXT_LENGTH_EXCEEDED',
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

/** Whether `value` is a {@link BatonError}. */
export function isBatonError(value: unknown): value is BatonError {
  return value instanceof BatonError;
}
