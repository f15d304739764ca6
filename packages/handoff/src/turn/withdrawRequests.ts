import { type Request, withdrawRequests as withdrawFrom } from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/**
 * Tells each participant whose pending requests were dropped unanswered (a discarded turn, a
 * closed session) which ones, through its optional `Executor.withdrawRequests` (a `HumanExecutor`
 * removes their tasks from its queue): core's `withdrawRequests` over the workflow's participants.
 * Called after the drop is stored.
 * @param runtime the session's runtime (its participants)
 * @param requests the requests that were pending
 */
export async function withdrawRequests(runtime: SessionRuntime, requests: readonly Request[]): Promise<void> {
  await withdrawFrom(runtime.config.participants.values(), requests);
}
