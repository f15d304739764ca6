import { ConfigurationError, InvalidInputError, NotFoundError, SessionClosedError } from '@baton/core';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

/**
 * The Baton error a failed session Update stands for: a refused or failed operation reaches the
 * client as Temporal's `WorkflowUpdateFailedError` around an `ApplicationFailure` whose `type` is the
 * Baton error's `code`; the caller's mistakes come back as the named errors `HandoffSession` throws
 * (`SessionClosedError`, `NotFoundError`, `InvalidInputError` (also for a bad id),
 * `ConfigurationError`; the Temporal error as `cause`). Anything else is returned as it is (its
 * `cause.type` names the Baton code, e.g. `MODEL_PROVIDER` after the retries ran out).
 *
 * @example
 * ```ts
 * try { await handle.executeUpdate(sendUpdate, { args: [{ text }] }); } catch (error) { throw batonFailure(error); }
 * ```
 */
export function batonFailure(error: unknown): unknown {
  const failure = error instanceof WorkflowUpdateFailedError ? error.cause : error;
  if (!(failure instanceof ApplicationFailure)) return error;
  const message = failure.message;
  const options = { cause: error };
  switch (failure.type) {
    case 'SESSION_CLOSED':
      return new SessionClosedError(message, options);
    case 'NOT_FOUND':
      return new NotFoundError(message, options);
    case 'INVALID_INPUT':
    case 'INVALID_ID':
      return new InvalidInputError(message, options);
    case 'CONFIGURATION':
      return new ConfigurationError(message, options);
    default:
      return error;
  }
}
