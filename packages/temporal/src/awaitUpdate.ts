import type { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallContext, Client, WorkflowHandle, WorkflowUpdateHandle } from '@temporalio/client';
import {
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { UpdateWaitEndedError } from './updateWaitEndedError.js';

/** How long one wait for an Update may take and who may end it (see `TemporalCallOptions`). */
export interface UpdateWait {
  /** The Update's id; Temporal runs an Update once per id and workflow run. */
  updateId: string;
  /** Ends the wait (not the Update) when aborted. */
  signal?: AbortSignal;
  /** Ends the wait (not the Update) after this many ms, over all the RPCs it takes. */
  timeoutMs?: number;
}

/** Pause between two asks for the same Update, in ms: short, so a result is picked up soon after it exists. */
const REASK_MS = [50, 200, 500, 1_000];

/**
 * Executes `update` on `handle` and waits for its result past any one RPC's deadline: when an RPC
 * ends with `WorkflowUpdateRPCTimeoutOrCancelledError` (the server's long-poll deadline, e.g. a turn
 * retried after a worker died), the same Update is asked for again by its `updateId`. Until the
 * workflow accepted it, it is sent again (Temporal dedupes by id: it attaches to the admitted Update,
 * or admits it once if the first send never got in); once accepted, its result is polled in the run
 * that accepted it, so a run that continued as new meanwhile never gets it a second time.
 * Only the caller's `signal`, `timeoutMs` or an enclosing `withDeadline` end the wait.
 *
 * @returns the Update's result
 * @throws {UpdateWaitEndedError} when the caller's signal, timeout or deadline ended the wait first
 * @throws `WorkflowUpdateFailedError` when the Update failed; other client errors as the SDK throws them
 * @example
 * ```ts
 * const turn = await awaitUpdate(client, handle, sendUpdate, [{ text: 'hi' }], { updateId: randomUUID(), timeoutMs: 600_000 });
 * ```
 */
export async function awaitUpdate<R, A extends [unknown, ...unknown[]]>(
  client: Client,
  handle: WorkflowHandle,
  update: UpdateDefinition<R, A>,
  args: A,
  wait: UpdateWait,
): Promise<R> {
  const { updateId, signal } = wait;
  const deadline = wait.timeoutMs === undefined ? undefined : Date.now() + wait.timeoutMs;
  const enclosing = enclosingDeadline(client);
  let accepted: WorkflowUpdateHandle<R> | undefined;
  const ended = (cause?: unknown): UpdateWaitEndedError | undefined => {
    const why = signal?.aborted
      ? 'its signal was aborted'
      : deadline !== undefined && Date.now() >= deadline
        ? `its timeoutMs (${wait.timeoutMs} ms) passed`
        : enclosing !== undefined && Date.now() >= enclosing
          ? 'the deadline of the enclosing withDeadline passed'
          : undefined;
    if (why === undefined) return undefined;
    return new UpdateWaitEndedError(
      `Stopped waiting for Update ${JSON.stringify(updateId)} of workflow ${handle.workflowId}: ${why}. The operation is not cancelled; call again with updateId ${JSON.stringify(updateId)} to get its result.`,
      {
        updateId,
        workflowId: handle.workflowId,
        workflowRunId: accepted?.workflowRunId,
        ...(cause === undefined ? {} : { cause }),
      },
    );
  };
  let ask = async (): Promise<R> => {
    accepted ??= await handle.startUpdate(update, { args, updateId, waitForStage: WorkflowUpdateStage.ACCEPTED });
    return accepted.result();
  };
  if (signal !== undefined) {
    const plain = ask;
    ask = () => client.withAbortSignal(signal, plain);
  }
  if (deadline !== undefined) {
    const scoped = ask;
    ask = () => client.withDeadline(deadline, scoped);
  }
  for (let asked = 0; ; asked++) {
    const before = ended();
    if (before !== undefined) throw before;
    try {
      return await ask();
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) throw error; // the Update's own outcome
      const end = ended(error);
      if (end !== undefined) throw end;
      if (!(error instanceof WorkflowUpdateRPCTimeoutOrCancelledError)) throw error;
    }
    try {
      await sleep(REASK_MS[Math.min(asked, REASK_MS.length - 1)], undefined, signal === undefined ? {} : { signal });
    } catch (error) {
      throw ended(error) ?? error;
    }
  }
}

/** The deadline of a `connection.withDeadline(...)` around this call, if the connection tells it. */
function enclosingDeadline(client: Client): number | undefined {
  const { callContextStorage } = client.connection as { callContextStorage?: AsyncLocalStorage<CallContext> };
  const deadline = callContextStorage?.getStore()?.deadline;
  return deadline === undefined ? undefined : new Date(deadline).getTime();
}
