import type { PendingWrite } from './checkpoint.js';
import type { NewMessage, ToolCall } from './message.js';

/** A tool call left without a result, and the agent that made it. */
export interface OpenToolCall {
  call: ToolCall;
  agent: string | undefined;
}

/**
 * The results that answer tool calls a conversation leaves open when it stops short (a close, a
 * discarded turn, an idle sweep), so no tool call stays dangling: a call whose tool already finished
 * (its pending write) keeps that result, so it never runs again; every other call gets the error
 * result `content`. The first result carries `control` as `metadata.control`, so committing it moves
 * the routing machine the way the caller stopped (`{ kind: 'end_conversation', reason }` closes it).
 *
 * @param calls the open calls, in call order
 * @param finished the finished result of a call, by tool call id, if any
 * @param content the error text of a call that did not finish
 * @returns one tool message per call, in call order (no ids or seqs: the caller commits them)
 * @example
 * ```ts
 * const results = openCallResults(calls, (id) => checkpoint?.pendingWrites.find((w) => w.toolCallId === id), 'Cancelled.', { kind: 'end_conversation', reason: 'idle' });
 * ```
 */
export function openCallResults(
  calls: readonly OpenToolCall[],
  finished: (toolCallId: string) => PendingWrite | undefined,
  content: string,
  control: Record<string, unknown>,
): NewMessage[] {
  return calls.map(({ call, agent }, index) => {
    const write = finished(call.id);
    const result: NewMessage = {
      role: 'tool',
      agent: write?.agent ?? agent ?? 'unknown',
      toolCallId: call.id,
      toolName: call.name,
      content: write?.content ?? content,
      isError: write?.isError ?? true,
    };
    if (write !== undefined) result.durationMs = write.durationMs;
    if (index === 0) result.metadata = { control };
    return result;
  });
}
