/**
 * Who makes a request, as the auth hook says: the tenant whose sessions it may reach, and the user.
 * A session created by a principal belongs to its tenant and user; a principal never reaches a
 * session of another tenant (it gets 404, as for a session that does not exist) nor one of another
 * user of its tenant.
 */
export interface Principal {
  tenantId?: string;
  userId?: string;
}

/**
 * The auth hook: reads a request (its `Authorization` header, a cookie, …) and returns the
 * {@link Principal}, or `undefined` to refuse it with 401. Throwing refuses it too (401).
 *
 * @example
 * ```ts
 * const authenticate: Authenticate = (request) => tokens.get(request.headers.get('authorization') ?? '');
 * ```
 */
export type Authenticate = (request: Request) => Principal | undefined | Promise<Principal | undefined>;

/** The tenant part of the keys the server keeps per branch (`''` for no tenant). */
export function tenantKeyOf(principal: Principal): string {
  return principal.tenantId ?? '';
}
