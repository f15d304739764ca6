/** The error a `RemoteExecutor` throws when its service fails a step. */
import { BatonErrorCode, BatonError, type BatonErrorOptions } from './batonError.js';

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
