import { AbortedError } from '@baton/core';

/**
 * The caller stopped waiting for an Update (its `signal` aborted, its `timeoutMs` passed, or the
 * deadline of an enclosing `connection.withDeadline` passed) before the operation was committed.
 * The operation itself is not cancelled: the session workflow still runs it, once. Call again with
 * the same `updateId` to wait for (or read) its result (while the run that accepted it is current; see
 * `workflowRunId`). Code `ABORTED` (a subclass of `AbortedError`).
 *
 * @example
 * ```ts
 * try {
 *   await chat.send('Where is order 7?', { updateId: 'msg-7', timeoutMs: 120_000 });
 * } catch (error) {
 *   if (error instanceof UpdateWaitEndedError) await chat.send('Where is order 7?', { updateId: error.updateId });
 * }
 * ```
 */
export class UpdateWaitEndedError extends AbortedError {
  /** The Update's id: call again with it to get the same operation's result. */
  readonly updateId: string;
  /** The session workflow the Update was sent to. */
  readonly workflowId: string;
  /**
   * The workflow run that accepted the Update, when it did: Temporal dedupes Update ids per run, so
   * after that run continued as new, `client.workflow.getHandle(workflowId, workflowRunId)
   * .getUpdateHandle(updateId).result()` reads the result where a new call would run it again.
   */
  readonly workflowRunId: string | undefined;

  constructor(
    message: string,
    details: { updateId: string; workflowId: string; workflowRunId?: string | undefined; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? {} : { cause: details.cause });
    this.updateId = details.updateId;
    this.workflowId = details.workflowId;
    this.workflowRunId = details.workflowRunId;
  }
}
