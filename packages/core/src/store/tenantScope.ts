import { InvalidInputError } from '../errors.js';
import { assertValidId } from '../ids.js';
import type { TenantScope } from './store.js';

/**
 * Validates a tenant scope before it is used, so an unsafe tenant id is refused even when the
 * session or episode it names does not exist.
 * @returns the scope (`{}` for `undefined`)
 * @throws {InvalidIdError} for an unsafe tenant id; {@link InvalidInputError} when the scope is not an object
 * @example
 * ```ts
 * import { assertTenantScope } from '@baton/core/store-kit';
 * assertTenantScope({ tenantId: 'acme' }); // { tenantId: 'acme' }
 * assertTenantScope({ tenantId: '$gt' }); // throws InvalidIdError
 * ```
 */
export function assertTenantScope(scope: TenantScope | undefined): TenantScope {
  if (scope === undefined || scope === null) return {};
  if (typeof scope !== 'object')
    throw new InvalidInputError(
      `The tenant scope must be an object like { tenantId: 'acme' }, not ${JSON.stringify(scope)}.`,
    );
  if (scope.tenantId !== undefined) assertValidId('tenant', scope.tenantId);
  return scope;
}

/**
 * Whether a session (or episode) is in the scope's tenant: the tenant ids are equal, and a scope
 * without `tenantId` holds exactly the sessions created without one (see `TenantScope`). Every
 * store applies this one rule to every call that names a session or an episode.
 *
 * @param owner the stored session or episode
 * @param scope the caller's scope
 * @throws {InvalidIdError} for an unsafe scope tenant id
 * @example
 * ```ts
 * import { inTenant } from '@baton/core/store-kit';
 * inTenant({ tenantId: 'acme' }, { tenantId: 'acme' }); // true
 * inTenant({ tenantId: 'acme' }, {}); // false: no tenant given
 * inTenant({}, {}); // true
 * ```
 */
export function inTenant(owner: { tenantId?: string | undefined }, scope: TenantScope | undefined): boolean {
  const tenantId = scope?.tenantId;
  if (tenantId !== undefined) assertValidId('tenant', tenantId);
  return owner.tenantId === tenantId;
}

/** The tenant scope part of an options object (`{}` without a `tenantId`). */
export function scopeOf(options: TenantScope): TenantScope {
  return options.tenantId === undefined ? {} : { tenantId: options.tenantId };
}
