/**
 * The measured step of the resume benches: open a session paused on an approval through the given
 * store object (as a fresh process would) and answer it, timing both and counting the store's reads.
 */
import type { Store } from '@baton/core';
import { type ApprovalDeskOptions, approvalDesk } from './approvalDesk.js';
import { countingStore, type StoreCounts } from './countingStore.js';

/** What opening and answering one paused session took. */
export interface AnswerTiming {
  /** `workflow.session({ id })`, in ms. */
  openMs: number;
  /** `session.respond(…)` until `turn.completed`, in ms. */
  answerMs: number;
  /** This process's CPU time (user + system) over open and answer, in ms: steadier than wall time on a shared machine. */
  cpuMs: number;
  counts: StoreCounts;
}

/**
 * Opens session `id` on a new approval desk over `store` and approves its pending request.
 * @throws {Error} when the session has no pending approval, or answering it does not complete the turn
 * @example
 * ```ts
 * const { openMs, answerMs } = await answerPaused(new FileStore({ directory }), 'paused-0');
 * ```
 */
export async function answerPaused(store: Store, id: string, options: ApprovalDeskOptions = {}): Promise<AnswerTiming> {
  const counting = countingStore(store);
  const desk = approvalDesk(counting.store, options);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const session = await desk.session({ id, branch: 'main' });
  const opened = performance.now();
  const request = session.pendingRequests[0];
  if (request === undefined) throw new Error(`session ${id} has no pending approval after opening`);
  let completed = false;
  for await (const event of session.respond(request.id, { approved: true }))
    if (event.type === 'turn.completed') completed = true;
  const answered = performance.now();
  const used = process.cpuUsage(cpu);
  if (!completed) throw new Error(`answering session ${id} did not complete its turn`);
  return {
    openMs: opened - started,
    answerMs: answered - opened,
    cpuMs: (used.user + used.system) / 1000,
    counts: counting.counts,
  };
}
