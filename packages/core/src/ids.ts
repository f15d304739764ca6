import { v7 as uuidv7 } from 'uuid';
import { InvalidIdError } from './errors.js';

/**
 * A new time-ordered id: a UUIDv7 (RFC 9562), so ids sort by creation time.
 *
 * @returns a 36-character lowercase UUID string
 * @example
 * ```ts
 * import { createId } from '@baton/core';
 * const id = createId(); // '019a8f4e-…'
 * ```
 */
export function createId(): string {
  return uuidv7();
}

const ID_PATTERN = /^[A-Za-z0-9_:][A-Za-z0-9_:.-]{0,127}$/;

/**
 * Whether `value` is a safe id: 1–128 characters of letters, digits, `_ - : .`, not starting with
 * `.` or `-`. Such an id can be a folder name and a query value; it can never be a path (`../x`,
 * `a/b`) or a MongoDB operator (`$gt`).
 */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value) && value !== '.' && !value.includes('..');
}

/**
 * Returns `value` if it is a safe id (see {@link isValidId}).
 *
 * @param kind what the id names, for the message (`'session'`, `'branch'`, …)
 * @throws {InvalidIdError} when it is not
 * @example
 * ```ts
 * import { assertValidId } from '@baton/core';
 * assertValidId('session', '../../etc'); // throws InvalidIdError
 * ```
 */
export function assertValidId(kind: string, value: unknown): string {
  if (!isValidId(value)) throw new InvalidIdError(kind, value);
  return value;
}
