import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import type { UserBuilder } from '@a2a-js/sdk/server/express';
import type { Request as ExpressRequest, Response as ExpressResponse, NextFunction, RequestHandler } from 'express';

/**
 * Who calls the A2A agent, as the auth hook says (the same shape as `@baton/server`'s `Principal`):
 * the tenant whose sessions the call may reach, and the user. A context or task created by a
 * principal is another principal's only when both have the same tenant and, when both have a
 * user, the same user.
 */
export interface A2APrincipal {
  tenantId?: string;
  userId?: string;
}

/**
 * The auth hook of {@link a2aApp} (the same type as `@baton/server`'s `Authenticate`): reads the
 * request (its `Authorization` header, a cookie, …; a Fetch `Request` with the HTTP method, URL and
 * headers, without the body) and returns the {@link A2APrincipal}, or `undefined` to refuse it with
 * HTTP 401. Throwing refuses it too (401).
 * @example
 * ```ts
 * const authenticate: A2AAuthenticate = (request) => tokens.get(request.headers.get('authorization') ?? '');
 * ```
 */
export type A2AAuthenticate = (request: Request) => A2APrincipal | undefined | Promise<A2APrincipal | undefined>;

/**
 * The SDK's `User` of an authenticated A2A call, carrying its {@link A2APrincipal}: what the thread
 * store and the executor read from `ServerCallContext.user`. `userName` (the SDK's key for a
 * caller's event buses) names tenant and user: `'<tenantId>/<userId>'`, `'<userId>'` without a tenant.
 * @example
 * ```ts
 * new A2APrincipalUser({ tenantId: 'acme', userId: 'ann' }).userName; // 'acme/ann'
 * ```
 */
export class A2APrincipalUser implements User {
  readonly principal: A2APrincipal;

  constructor(principal: A2APrincipal) {
    this.principal = { ...principal };
  }

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    const { tenantId, userId = '' } = this.principal;
    return tenantId === undefined ? userId : `${tenantId}/${userId}`;
  }
}

/**
 * The principal of an A2A call, from the SDK's `ServerCallContext.user`: an {@link A2APrincipalUser}'s
 * principal; for another authenticated `User` (a custom `userBuilder`), `{ userId: user.userName }`
 * (no tenant); for no user or an unauthenticated one, `{}` (the tenantless space every
 * unauthenticated caller shares, as before authentication existed).
 * @example
 * ```ts
 * principalOf(context); // { tenantId: 'acme', userId: 'ann' }
 * ```
 */
export function principalOf(context: ServerCallContext | undefined): A2APrincipal {
  const user = context?.user;
  if (user instanceof A2APrincipalUser) return user.principal;
  if (user?.isAuthenticated === true && user.userName !== '') return { userId: user.userName };
  return {};
}

/**
 * Whether `principal` may reach what `owner` created: the same tenant (none for both counts), and
 * the same user when both have one (as `@baton/server` decides for a session).
 */
export function isOwnedBy(owner: A2APrincipal, principal: A2APrincipal): boolean {
  if ((owner.tenantId ?? '') !== (principal.tenantId ?? '')) return false;
  return owner.userId === undefined || principal.userId === undefined || owner.userId === principal.userId;
}

/** The store scope of a principal's calls (`{ tenantId }`, or `{}` without a tenant). */
export function scopeOf(principal: A2APrincipal): { tenantId?: string } {
  return principal.tenantId === undefined ? {} : { tenantId: principal.tenantId };
}

/** The Express middleware and the SDK `UserBuilder` {@link a2aAuthentication} returns. */
export interface A2AAuthentication {
  /** Answers HTTP 401 (`{ error: { code: 'UNAUTHENTICATED', message } }`) before any JSON-RPC work. */
  middleware: RequestHandler;
  /** The caller's {@link A2APrincipalUser}, for the SDK's transport handlers (after `middleware`). */
  userBuilder: UserBuilder;
}

/**
 * Authentication for the SDK's Express transports: `middleware` runs `authenticate` on each request
 * and answers 401 when it returns `undefined` or throws; `userBuilder` hands the principal to the
 * SDK as an {@link A2APrincipalUser}. {@link a2aApp} uses it; use it to mount another transport.
 * @example
 * ```ts
 * import { restHandler } from '@a2a-js/sdk/server/express';
 * const auth = a2aAuthentication(authenticate);
 * app.use('/rest', auth.middleware, restHandler({ requestHandler, userBuilder: auth.userBuilder }));
 * ```
 */
export function a2aAuthentication(authenticate: A2AAuthenticate): A2AAuthentication {
  const principals = new WeakMap<ExpressRequest, A2APrincipal>();
  const middleware = async (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
    let principal: A2APrincipal | undefined;
    try {
      principal = await authenticate(fetchRequestOf(req));
    } catch {
      principal = undefined;
    }
    if (principal === undefined) {
      res
        .status(401)
        .set('www-authenticate', 'Bearer')
        .json({
          error: { code: 'UNAUTHENTICATED', message: 'The request carries no credentials the A2A agent accepts.' },
        });
      return;
    }
    principals.set(req, principal);
    next();
  };
  const userBuilder: UserBuilder = async (req) => new A2APrincipalUser(principals.get(req) ?? {});
  return { middleware, userBuilder };
}

/** The Fetch `Request` the auth hook reads: method, absolute URL and headers (no body). */
function fetchRequestOf(req: ExpressRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const url = `${req.protocol}://${req.get('host') ?? '127.0.0.1'}${req.originalUrl}`;
  return new Request(url, { method: req.method, headers });
}
