import { isDeepStrictEqual } from 'node:util';
import { branchStateAt, InvalidInputError, type Message, type State } from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/**
 * Forks the runtime's branch at `atSeq` as branch `branchId` (see `HandoffSession.fork`): the full
 * history is loaded, the fork point checked, and the new branch stored with the state as of `atSeq`
 * (or `state`). The caller holds the session's lock.
 *
 * @throws {InvalidInputError} for a seq past the head or one that splits tool calls from their results,
 *   or when the state as of `atSeq` cannot be known and no `state` is given; `ConcurrencyError` when
 *   the branch id exists
 */
export async function forkAt(
  runtime: SessionRuntime,
  options: { atSeq: number; branchId: string; state?: State },
): Promise<void> {
  await runtime.completeHistory();
  const messages = runtime.history.messages;
  assertForkPoint(messages, options.atSeq);
  await runtime.config.store.forkBranch(
    runtime.sessionId,
    {
      branchId: options.branchId,
      parent: { branchId: runtime.branchId, atSeq: options.atSeq },
      state: options.state ?? forkState(runtime, options.atSeq),
    },
    runtime.scope,
  );
}

/**
 * The branch state as of `atSeq`: the current state at the head, else the state rebuilt from the
 * patches logged on the messages, once the log is shown to rebuild the current state.
 *
 * @throws {InvalidInputError} when the logged patches do not rebuild the current state
 */
function forkState(runtime: SessionRuntime, atSeq: number): State {
  const current = runtime.state.branch;
  const messages = runtime.history.messages;
  if (atSeq === runtime.history.headSeq) return current;
  if (!isDeepStrictEqual(branchStateAt(messages), current)) {
    throw new InvalidInputError(
      `Cannot tell the state of branch ${JSON.stringify(runtime.branchId)} as of seq ${atSeq}: its state was changed other than by its turns, so its messages do not log it. Pass fork({ atSeq, branchId, state }) with the state the new branch should start from.`,
    );
  }
  return branchStateAt(messages, atSeq);
}

/** @throws {InvalidInputError} when `atSeq` is out of range or splits an assistant's tool calls from their results */
function assertForkPoint(messages: readonly Message[], atSeq: number): void {
  const head = messages.at(-1)?.seq ?? 0;
  if (!Number.isInteger(atSeq) || atSeq < 0 || atSeq > head) {
    throw new InvalidInputError(
      `Cannot fork at seq ${JSON.stringify(atSeq)}: use an integer from 0 to ${head} (the branch head).`,
    );
  }
  const open = new Map<string, number>();
  for (const message of messages) {
    if (message.seq > atSeq) break;
    for (const call of message.toolCalls ?? []) open.set(call.id, message.seq);
    if (message.role === 'tool' && message.toolCallId !== undefined) open.delete(message.toolCallId);
  }
  const [split] = open.values();
  if (split !== undefined) {
    throw new InvalidInputError(
      `Cannot fork at seq ${atSeq}: it falls between the tool calls of message ${split} and their results. Fork at ${split - 1} or after the results.`,
    );
  }
}
