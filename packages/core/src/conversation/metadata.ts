import { InvalidInputError } from '../errors.js';

/** Free-form JSON metadata on sessions, messages and episodes. */
export type Metadata = Record<string, unknown>;

/**
 * Keys refused in metadata and state at any depth: assigned by JavaScript code that merges or
 * copies the object, they would change an object's prototype (prototype pollution), and stores
 * would keep them differently.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Checks that metadata is plain JSON whose keys can be stored in any backend: no key starts with
 * `$` or contains `.` or a NUL (those are MongoDB operators and paths), and no key is `__proto__`,
 * `constructor` or `prototype` (prototype pollution), at any depth. Build such an object with
 * `JSON.parse('{"__proto__":1}')` to see it refused.
 *
 * @param where names the field, for the message (`'session.metadata'`)
 * @returns the same object
 * @throws {InvalidInputError} naming the first bad key and its path
 */
export function assertSafeMetadata<T>(where: string, value: T): T {
  // The usual case is checked without building a path per key; the path is built only to name a bad key.
  if (!isSafe(value)) visit(value, where);
  return value;
}

/** Whether no key at any depth of `value` is unsafe (what {@link visit} checks, without paths). */
function isSafe(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (const item of value) if (!isSafe(item)) return false;
    return true;
  }
  // for…in with hasOwn visits what Object.keys lists without allocating the list (checked once per stored message).
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.startsWith('$') || key.includes('.') || key.includes('\0') || RESERVED_KEYS.has(key)) return false;
    if (!isSafe((value as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function visit(value: unknown, path: string): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) visit(item, `${path}[${index}]`);
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
    visit(child, `${path}.${key}`);
  }
}
