import type { Request } from '@baton/core';
import type { SessionRuntime } from './sessionRuntime.js';

/**
 * Tells each participant whose pending requests were dropped unanswered (a discarded turn, a
 * closed session) which ones, through its optional `Executor.withdrawRequests` (a `HumanExecutor`
 * removes their tasks from its queue). Called after the drop is stored.
 * @param runtime the session's runtime (its participants)
 * @param requests the requests that were pending
 */
export async function withdrawRequests(runtime: SessionRuntime, requests: readonly Request[]): Promise<void> {
  const byAgent = new Map<string, Request[]>();
  for (const request of requests) byAgent.set(request.agent, [...(byAgent.get(request.agent) ?? []), request]);
  for (const [agent, dropped] of byAgent) await runtime.config.participants.get(agent)?.withdrawRequests?.(dropped);
}
