import { emptyUsage, type Message, type Usage } from '@baton/core';
import type { HandoffSession, HandoffWorkflow } from '@baton/handoff';
import type { CommittedTurn, SessionTarget } from './sessionContract.js';

/**
 * The committed result of an operation, read back from the store (the system of record): every
 * message stored on the branch after `afterSeq` (so messages an earlier, killed attempt stored count
 * once), the last answer to the user among them, and the session's requests, next agent and status
 * as `session` (just used, so current) knows them.
 *
 * @param usage the model usage of the attempt that finished the operation
 * @param completed whether the operation reached its end (`turn.completed`, a pause on requests, or the close)
 * @example
 * ```ts
 * const turn = await committedTurn(workflow, session, { sessionId: 'chat-1' }, 4, usage, true);
 * turn.messages.map((m) => m.seq); // [5, 6, 7, 8]
 * ```
 */
export async function committedTurn(
  workflow: HandoffWorkflow,
  session: HandoffSession,
  target: SessionTarget,
  afterSeq: number,
  usage: Usage = emptyUsage(),
  completed = true,
): Promise<CommittedTurn> {
  const messages = await workflow.config.store.readMessages(session.id, session.branchId, {
    fromSeq: afterSeq + 1,
    ...(target.tenantId === undefined ? {} : { tenantId: target.tenantId }),
  });
  const copies = messages.map((m) => structuredClone(m) as Message);
  const answer = copies.findLast(
    (m) => m.role === 'assistant' && (m.toolCalls === undefined || m.toolCalls.length === 0),
  );
  const closed = session.info.status === 'closed' || session.routingState === 'closed';
  return {
    sessionId: session.id,
    branchId: session.branchId,
    ...(answer === undefined ? {} : { message: answer }),
    messages: copies,
    pendingRequests: closed ? [] : session.pendingRequests.map((r) => structuredClone(r)),
    usage,
    ...(closed ? {} : { nextAgent: session.activeAgent }),
    completed,
    closed,
    headSeq: copies.at(-1)?.seq ?? afterSeq,
    turn: session.turn,
  };
}

/**
 * The branch's last committed seq as `session` loaded it (0 for an empty branch).
 * @example
 * ```ts
 * headSeqOf(await desk.session({ id: 'chat-81', branch: 'main' })); // 12
 * ```
 */
export function headSeqOf(session: HandoffSession): number {
  return session.messages.at(-1)?.seq ?? 0;
}
