import type { ModelMessage } from '@baton/core';

/**
 * A run of history messages that is kept or dropped as a whole: one message, or an assistant
 * message with tool calls together with every tool result answering it (docs/architecture.md: a tool call and
 * its result are never separated).
 */
export interface MessageGroup {
  /** Index of the group's first message in the history it came from. */
  start: number;
  messages: ModelMessage[];
}

/**
 * Splits history into {@link MessageGroup}s, oldest first. A `tool` message joins the nearest
 * earlier assistant message whose tool calls include its `toolCallId` (results usually follow their
 * call directly; a result that answers no call in the history stays alone). When a result lies
 * after other messages, everything from the call through that result becomes one group, so no
 * choice of whole groups can separate them.
 *
 * @param history model messages without the system and context messages
 * @returns groups covering every message once, in order
 * @example
 * ```ts
 * groupMessages([
 *   { role: 'user', content: 'Refund order 1234' },
 *   { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'refund', arguments: '{}' }] },
 *   { role: 'tool', content: 'ok', toolCallId: 'c1' },
 *   { role: 'assistant', content: 'Done.' },
 * ]).map((g) => g.messages.length); // [1, 2, 1]
 * ```
 */
export function groupMessages(history: readonly ModelMessage[]): MessageGroup[] {
  // For each message, the index of the last message its group must reach.
  const callAt = new Map<string, number>();
  const reach = history.map((_, i) => i);
  history.forEach((message, i) => {
    for (const call of message.toolCalls ?? []) callAt.set(call.id, i);
    if (message.role === 'tool' && message.toolCallId !== undefined) {
      const at = callAt.get(message.toolCallId);
      if (at !== undefined) reach[at] = Math.max(reach[at]!, i);
    }
  });
  const groups: MessageGroup[] = [];
  let start = 0;
  while (start < history.length) {
    let end = reach[start]!;
    for (let i = start; i <= end; i++) end = Math.max(end, reach[i]!);
    groups.push({ start, messages: history.slice(start, end + 1) });
    start = end + 1;
  }
  return groups;
}
