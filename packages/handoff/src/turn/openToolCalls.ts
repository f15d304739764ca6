import { type Message, openCallResults } from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { BufferedJournal } from './bufferedJournal.js';

/**
 * Gives every tool call of the last assistant message that has no result yet one, so no tool call is
 * left dangling when a turn ends without finishing its step (a close, a discard): core's
 * `openCallResults` over the runtime's pending writes, committed through the journal, so the first
 * result's `control` moves the routing machine (and a reload replays the same move). Does nothing when the last message is not such a call.
 *
 * @returns the committed results (stored at the next durability point)
 */
export async function answerOpenToolCalls(
  runtime: SessionRuntime,
  content: string,
  control: Record<string, unknown>,
): Promise<Message[]> {
  const last = runtime.history.last;
  if (last?.role !== 'assistant' || last.toolCalls === undefined || last.toolCalls.length === 0) return [];
  const calls = last.toolCalls.map((call) => ({ call, agent: last.agent }));
  const results = openCallResults(calls, (id) => runtime.pendingWrites.get(id), content, control);
  return new BufferedJournal(runtime).commit(results);
}
