/** The id rules of every store: session and branch ids are safe to use as file names and query values. */
import { assertValidId } from '../ids.js';

/**
 * Validates a session id.
 * @throws {InvalidIdError} for ids such as `../x`, `a/b` or `$gt`
 */
export function assertSessionId(id: unknown): string {
  return assertValidId('session', id);
}

/**
 * Validates a branch id (branch ids name files in `FileStore`, so they follow the same rule as session ids).
 * @throws {InvalidIdError} for ids such as `../x`, `a/b` or `$gt`
 */
export function assertBranchId(id: unknown): string {
  return assertValidId('branch', id);
}
