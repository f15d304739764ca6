import type { Request } from '../conversation/request.js';
import type { Executor } from './executor.js';

/**
 * Tells each participant whose pending requests were dropped unanswered (a discarded turn, a closed
 * or erased session) which ones, through its optional `Executor.withdrawRequests` (a
 * `HumanExecutor` removes their tasks from its `HumanQueue`). Requests of an agent not among
 * `participants`, or of a participant without `withdrawRequests`, are skipped. Call it once the drop
 * is stored (or, before an erasure, before the data goes).
 *
 * @param participants the executors that may have queued work, e.g. `workflow.config.participants.values()`
 * @param requests the dropped requests (each names its participant in `agent`)
 * @throws what a participant's `withdrawRequests` throws (e.g. its queue service is down)
 * @example
 * ```ts
 * import { findOpenToolCalls, withdrawRequests } from '@baton/core';
 * const open = await findOpenToolCalls(store, 'chat-81');
 * await withdrawRequests([operator], open.flatMap((branch) => branch.requests));
 * ```
 */
export async function withdrawRequests(participants: Iterable<Executor>, requests: readonly Request[]): Promise<void> {
  const byName = new Map<string, Executor>();
  for (const participant of participants) byName.set(participant.name, participant);
  const byAgent = new Map<string, Request[]>();
  for (const request of requests) byAgent.set(request.agent, [...(byAgent.get(request.agent) ?? []), request]);
  for (const [agent, dropped] of byAgent) await byName.get(agent)?.withdrawRequests?.(dropped);
}
