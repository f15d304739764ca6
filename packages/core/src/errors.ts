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
export { BatonErrorCode, BatonError, isBatonError, type BatonErrorOptions } from './errors/batonError.js';
export {
  ConfigurationError,
  InvalidIdError,
  InvalidInputError,
  NestingTooDeepError,
  NotFoundError,
  AssetTooLargeError,
  AbortedError,
} from './errors/callerErrors.js';
export {
  SessionClosedError,
  BranchHasChildrenError,
  CheckpointInUseError,
  AmbiguousBranchError,
} from './errors/sessionStateErrors.js';
export {
  ConcurrencyError,
  CheckpointCorruptError,
  StoreError,
  DocumentCorruptError,
  LogRecordCorruptError,
  UnsupportedSchemaVersionError,
} from './errors/storeErrors.js';
export {
  ModelBehaviorError,
  OutputValidationError,
  MaxStepsExceededError,
  ModelProviderError,
  RateLimitError,
  AuthenticationError,
  BadRequestError,
  ContextLengthExceededError,
  TimeoutError,
  type ModelProviderErrorOptions,
} from './errors/modelErrors.js';
export {
  RemoteExecutorError,
  type RemoteFailure,
  type RemoteExecutorErrorOptions,
} from './errors/remoteExecutorError.js';
