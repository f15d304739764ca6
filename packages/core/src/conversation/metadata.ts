import { InvalidInputError, NestingTooDeepError } from '../errors.js';

/** Free-form JSON metadata on sessions, messages and episodes. */
export type Metadata = Record<string, unknown>;

/**
 * Keys refused in metadata and state at any depth: assigned by JavaScript code that merges or
 * copies the object, they would change an object's prototype (prototype pollution), and stores
 * would keep them differently.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * How deeply metadata and state may nest: the object itself is level 1, each object or array
 * inside it one more. Every store refuses deeper values (with {@link NestingTooDeepError}) on write
 * and on read, before anything walks or copies them: deep enough for any real document, well
 * inside MongoDB's 100 levels per document and the JavaScript stack.
 *
 * @example
 * ```ts
 * import { MAX_METADATA_DEPTH } from '@baton/core';
 * // { a: { a: … } } with MAX_METADATA_DEPTH objects is kept; one level more is refused.
 * ```
 */
export const MAX_METADATA_DEPTH = 64;

/**
 * Checks that metadata is plain JSON whose keys can be stored in any backend: no key starts with
 * `$` or contains `.` or a NUL (those are MongoDB operators and paths), and no key is `__proto__`,
 * `constructor` or `prototype` (prototype pollution), at any depth; and that it nests at most
 * {@link MAX_METADATA_DEPTH} levels. Build such an object with `JSON.parse('{"__proto__":1}')` to see it refused.
 *
 * @param where names the field, for the message (`'session.metadata'`)
 * @returns the same object
 * @throws {InvalidInputError} naming the first bad key and its path; {@link NestingTooDeepError} (an
 *   `InvalidInputError`) naming `where` and the limit when it nests deeper than {@link MAX_METADATA_DEPTH}
 * @example
 * ```ts
 * import { assertSafeMetadata } from '@baton/core';
 * assertSafeMetadata('session.metadata', { plan: 'pro' }); // returns it
 * assertSafeMetadata('session.metadata', { $where: 'x' }); // throws InvalidInputError
 * ```
 */
export function assertSafeMetadata<T>(where: string, value: T): T {
  // The usual case is checked without building a path per key; the path is built only to name a bad key.
  if (!isSafe(value, 1)) visit(value, where, 1, where);
  return value;
}

/** Whether no key at any depth of `value` is unsafe and it nests at most the limit (what {@link visit} checks, without paths). */
function isSafe(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > MAX_METADATA_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isSafe(item, depth + 1)) return false;
    return true;
  }
  // for…in with hasOwn visits what Object.keys lists without allocating the list (checked once per stored message).
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.startsWith('$') || key.includes('.') || key.includes('\0') || RESERVED_KEYS.has(key)) return false;
    if (!isSafe((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function visit(value: unknown, path: string, depth: number, where: string): void {
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_METADATA_DEPTH) throw new NestingTooDeepError(where, MAX_METADATA_DEPTH);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) visit(item, `${path}[${index}]`, depth + 1, where);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key.startsWith('$') || key.includes('.') || key.includes('\0')) {
      throw new InvalidInputError(
        `${path} has the key ${JSON.stringify(key)}: metadata keys may not start with "$" or contain "." (they would be read as database operators or paths). Rename the key.`,
      );
    }
    if (RESERVED_KEYS.has(key)) {
      throw new InvalidInputError(
        `${path} has the key ${JSON.stringify(key)}: "__proto__", "constructor" and "prototype" are not allowed as metadata or state keys (they could change object prototypes). Rename the key.`,
      );
    }
    visit(child, `${path}.${key}`, depth + 1, where);
  }
}
