/**
 * Checks of caller input before it reaches a query: every value that lands in a filter is a
 * validated id, a checked string or a checked number, never a caller's object (a `{ $gt: '' }`
 * passed where a string belongs is refused here).
 */
import { assertValidId, InvalidInputError, type TenantScope } from '@baton/core';

export { assertBranchId } from '@baton/core/store-kit';

/** Validates a checkpoint id. @throws {InvalidIdError} */
export function assertCheckpointId(value: unknown): string {
  return assertValidId('checkpoint', value);
}

/**
 * The filter fragment of a tenant scope: `{ tenantId }` or `{}`.
 * @throws {InvalidIdError} for an unsafe tenant id; {@link InvalidInputError} when the scope is not an object
 */
export function tenantFilter(scope: TenantScope | undefined): { tenantId?: string } {
  if (scope === undefined || scope === null) return {};
  if (typeof scope !== 'object')
    throw new InvalidInputError(
      `The tenant scope must be an object like { tenantId: 'acme' }, not ${JSON.stringify(scope)}.`,
    );
  return scope.tenantId === undefined ? {} : { tenantId: assertValidId('tenant', scope.tenantId) };
}

/**
 * The filter fragment that matches exactly the scope's tenant: `{ tenantId }`, or, without a
 * tenant id, `{ tenantId: { $exists: false } }` (sessions and episodes created without one), as
 * `TenantScope` says for calls that name a session or an episode.
 * @throws {InvalidIdError} for an unsafe tenant id; {@link InvalidInputError} when the scope is not an object
 */
export function tenantMatch(scope: TenantScope | undefined): { tenantId: string | { $exists: false } } {
  return { tenantId: tenantFilter(scope).tenantId ?? { $exists: false } };
}

/**
 * Checks a whole number (a seq, a version, a limit).
 * @throws {InvalidInputError} naming the field and the value
 */
export function assertWholeNumber(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidInputError(`${name} must be a whole number >= ${min}, not ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * Checks a non-negative duration or age in milliseconds.
 * @throws {InvalidInputError}
 */
export function assertMilliseconds(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidInputError(`${name} must be a number of milliseconds >= 0, not ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * Checks an ISO-8601 timestamp used as a bound.
 * @throws {InvalidInputError} when it is not a string that `Date.parse` understands
 */
export function assertTimestamp(name: string, value: unknown): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw new InvalidInputError(
      `${name} must be an ISO-8601 timestamp string such as "2025-01-01T00:00:00.000Z", not ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * Checks an optional plain object argument (an options bag).
 * @throws {InvalidInputError} when it is present and not an object
 */
export function optionsObject<T extends object>(name: string, value: T | undefined): Partial<T> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new InvalidInputError(`${name} must be an object, not ${JSON.stringify(value)}.`);
  return value;
}
