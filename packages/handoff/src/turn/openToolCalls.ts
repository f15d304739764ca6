import type { Message, NewMessage } from '@baton/core';
import type { SessionRuntime } from '../session/sessionRuntime.js';
import { StoreJournal } from './storeJournal.js';

/**
 * Gives every tool call of the last assistant message that has no result yet one, so no tool call is
 * left dangling when a turn ends without finishing its step (a close, a discard): a result the step
 * already finished (a pending write) is used as it is, the others get an error result `content`.
 * The first result carries `control` in its metadata, so committing it moves the routing machine
 * (and a reload replays the same move). Does nothing when the last message is not such a call.
 *
 * @returns the committed results (stored at the next durability point)
 */
export async function answerOpenToolCalls(runtime: SessionRuntime, content: string, control: Record<string, unknown>): Promise<Message[]> {
  const last = runtime.history.last;
  if (last?.role !== 'assistant' || last.toolCalls === undefined || last.toolCalls.length === 0) return [];
  const results: NewMessage[] = last.toolCalls.map((call, index) => {
    const write = runtime.pendingWrites.get(call.id);
    const result: NewMessage = {
      role: 'tool',
      agent: write?.agent ?? last.agent ?? 'unknown',
      toolCallId: call.id,
      toolName: call.name,
      content: write?.content ?? content,
      isError: write?.isError ?? true,
    };
    if (index === 0) result.metadata = { control };
    return result;
  });
  return new StoreJournal(runtime).commit(results);
}
