import { HttpError } from './errors.js';

/** The JSON body of every error response: `{ error: { code, message, issues? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; issues?: readonly unknown[] };
}

/**
 * HTTP statuses of Baton's error codes (errors are recognised by their `code`, not their class):
 * a caller's bad input 400, unknown session/branch/request 404, a lost race or a running turn 409,
 * a closed session 410 (it exists, and takes no more turns), a store failure 503; anything else 500.
 */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  INVALID_ID: 400,
  INVALID_INPUT: 400,
  ASSET_TOO_LARGE: 413,
  AMBIGUOUS_BRANCH: 400,
  NOT_FOUND: 404,
  CONCURRENCY: 409,
  BRANCH_HAS_CHILDREN: 409,
  CHECKPOINT_IN_USE: 409,
  SESSION_CLOSED: 410,
  STORE: 503,
  DOCUMENT_CORRUPT: 500,
};

/**
 * The HTTP status and JSON body for `error`: an {@link HttpError} keeps its own status; Baton's
 * errors map by `code` ({@link STATUS_OF_CODE}) and keep their message; anything else is a 500 whose
 * message does not leak internals.
 */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof HttpError) {
    return {
      status: error.status,
      body: {
        error: {
          code: error.code,
          message: error.message,
          ...(error.issues === undefined ? {} : { issues: error.issues }),
        },
      },
    };
  }
  const code =
    typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
      ? error.code
      : undefined;
  const status = code === undefined ? undefined : STATUS_OF_CODE[code];
  if (code !== undefined && status !== undefined && error instanceof Error)
    return { status, body: { error: { code, message: error.message } } };
  return {
    status: 500,
    body: { error: { code: code ?? 'INTERNAL', message: 'The server failed to handle the request; see its log.' } },
  };
}
