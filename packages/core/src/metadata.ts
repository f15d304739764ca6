import { InvalidInputError } from './errors.js';

/** Free-form JSON metadata on sessions, messages and episodes. */
export type Metadata = Record<string, unknown>;

/**
 * Checks that metadata is plain JSON whose keys can be stored in any backend: no key starts with
 * `$` or contains `.` or a NUL (those are MongoDB operators and paths), at any depth.
 *
 * @param where names the field, for the message (`'session.metadata'`)
 * @returns the same object
 * @throws {InvalidInputError} naming the first bad key and its path
 */
export function assertSafeMetadata<T>(where: string, value: T): T {
  visit(value, where);
  return value;
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
    visit(child, `${path}.${key}`);
  }
}
