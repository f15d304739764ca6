/**
 * The stream oracle of the `--replicas` campaign: what the customer received over SSE, across every
 * replica and reconnect of a trial, judged against the branch the store holds at the end.
 */
import type { Message } from '@baton/core';
import type { Violation } from './oracle.js';
import type { StreamWitness } from './replicaCustomer.js';

/**
 * Checks that no SSE id named two different events (`event-id-reused`), and that the customer saw a
 * `message` event for every message stored on the branch (`message-unseen`).
 *
 * @returns the violations found (empty when the streams are sound)
 * @example
 * ```ts
 * const violations = judgeStreams(customer.witness, await store.readMessages('chaos-chat', 'main'));
 * ```
 */
export function judgeStreams(witness: StreamWitness, stored: readonly Message[]): Violation[] {
  const violations: Violation[] = [];
  for (const { id, first, later } of witness.conflicts.slice(0, 5))
    violations.push({
      invariant: 'event-id-reused',
      detail: `SSE id ${id} carried ${first.slice(0, 300)}\n then ${later.slice(0, 300)}`,
    });
  if (witness.conflicts.length > 5)
    violations.push({ invariant: 'event-id-reused', detail: `… and ${witness.conflicts.length - 5} more ids` });
  const unseen = stored.filter((m) => !witness.messages.has(m.id));
  if (unseen.length > 0)
    violations.push({
      invariant: 'message-unseen',
      detail: `the client never got a message event for ${unseen.length} of ${stored.length} stored messages: ${unseen
        .slice(0, 6)
        .map((m) => `seq ${m.seq} ${m.role}${m.agent === undefined ? '' : ` (${m.agent})`} ${m.id}`)
        .join(', ')}`,
    });
  return violations;
}
