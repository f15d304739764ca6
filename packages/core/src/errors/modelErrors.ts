/** Errors of the model (its behaviour) and of the model provider (its HTTP failures). */
import { BatonErrorCode, BatonError, type BatonErrorOptions } from './batonError.js';

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
  override readonly code: BatonErrorCode = BatonErrorCode.BAD_REQUEST;
}

/**
 * HTTP 400 whose body says the request does not fit the model's context window (OpenAI's error code
 * `context_length_exceeded`, which OpenAI-compatible servers such as llama-cpp-python's also send):
 * the messages plus the answer's token budget are more tokens than the model takes. A `BadRequestError`
 * (code `CONTEXT_LENGTH_EXCEEDED`); retrying the same request fails the same way, so trim the history
 * (e.g. `@baton/memory`'s working memory with a smaller token budget) or lower `maxOutputTokens`.
 *
 * @example
 * ```ts
 * import { ContextLengthExceededError } from '@baton/core';
 * try { await collect(model.stream(request)); }
 * catch (error) { if (error instanceof ContextLengthExceededError) console.log(error.status, error.message); }
 * ```
 */
export class ContextLengthExceededError extends BadRequestError {
  override readonly code = BatonErrorCode.CONTEXT_LENGTH_EXCEEDED;
}

/** The provider did not answer in time (after retries). */
export class TimeoutError extends ModelProviderError {
  override readonly code = BatonErrorCode.TIMEOUT;
}
