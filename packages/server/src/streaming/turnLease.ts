import { ConcurrencyError } from '@baton/core';

/** The 409 of a send to a branch whose turn runs in another process. */
export function runningElsewhere(sessionId: string, branchId: string): ConcurrencyError {
  return new ConcurrencyError(
    `A turn is running on session ${JSON.stringify(sessionId)} branch ${JSON.stringify(branchId)}; follow it with GET /sessions/${sessionId}/events and try again when it has completed.`,
  );
}
