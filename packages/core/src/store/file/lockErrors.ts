/** The errors of a session lock that could not be taken, alike for the kernel lock and the folder lock. */
import { ConcurrencyError, StoreError } from '../../errors.js';

/** Another writer held session `sessionId`'s lock for longer than `waitMs` (ms). */
export function lockHeldTooLong(sessionId: string, waitMs: number, cause?: unknown): ConcurrencyError {
  return new ConcurrencyError(
    `Session ${JSON.stringify(sessionId)} is being written by another writer (its lock was held for more than ${waitMs} ms). Retry later.`,
    cause === undefined ? undefined : { cause },
  );
}

/** The file system refused the lock of session `sessionId` under `locksDir` (`cause`: its error). */
export function lockFailed(sessionId: string, locksDir: string, cause: unknown): StoreError {
  return new StoreError(
    `Could not lock session ${JSON.stringify(sessionId)} under ${locksDir}: ${(cause as Error).message}`,
    { cause },
  );
}
