/**
 * Errors of the HTTP layer itself (the others are `@baton/core`'s, mapped to statuses by
 * `errorResponse`): a request without credentials the auth hook accepts, a body that is not JSON or
 * fails its schema. Each carries the HTTP `status` it answers with and a stable `code`.
 */
export class HttpError extends Error {
  override readonly name: string;
  /**
   * @param status the HTTP status to answer with
   * @param code a stable code (`UNAUTHENTICATED`, `INVALID_JSON`, `INVALID_BODY`)
   * @param message what is wrong and how to fix it
   * @param issues for `INVALID_BODY`, the zod issues (`{ path, message, code }`)
   */
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 413,
    readonly code: string,
    message: string,
    readonly issues?: readonly { path: readonly PropertyKey[]; message: string; code: string }[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}
