import type { ModelMessage } from '@baton/core';
import { groupMessages } from './messageGroups.js';
import { TOKENS_PER_MESSAGE, type TokenCounter } from './tokenCounter.js';

/** The tokens a message is guessed to cost before any is counted (sizes the first page an open reads). */
export const GUESSED_TOKENS_PER_MESSAGE = 32;

/**
 * How many older messages a `'drop-oldest'` budget of `maxTokens` (no pinned first message) may still
 * need, given only the newest part of a history (working memory's `olderHistoryNeeded`). It is `0`
 * once `newest` has a part that settles every input: from the first group (see {@link groupMessages})
 * after the last tool result whose call is not in `newest` (an older message may belong to that
 * result's group), costing more than `maxTokens` and holding a user message. Trimming keeps the
 * newest user message's group and the newest other groups that fit, stopping at the first that does
 * not: that part alone costs more than the whole budget, so the stop falls inside it, whatever older
 * history or instructions come with it. Else an estimate from the average cost of `newest`'s
 * messages (at least 1).
 *
 * @param newest the newest messages of a history, oldest first (model messages, no instructions)
 * @param counter the counter working memory counts with
 * @param maxTokens the budget of a whole model input, in tokens
 * @returns `0` when no older message can reach a model input, else about how many older ones to read
 * @example
 * ```ts
 * olderMessagesForBudget([], new TokenCounter(), 2000); // 63: a first page of 2,001 tokens at 32 a message
 * ```
 */
export function olderMessagesForBudget(
  newest: readonly ModelMessage[],
  counter: TokenCounter,
  maxTokens: number,
): number {
  if (newest.length === 0) return Math.ceil((maxTokens + 1) / GUESSED_TOKENS_PER_MESSAGE);
  // The last result whose call is older than `newest`: its whole group is unknown.
  const calls = new Set<string>();
  let lastOrphan = -1;
  newest.forEach((message, i) => {
    for (const call of message.toolCalls ?? []) calls.add(call.id);
    if (message.role === 'tool' && message.toolCallId !== undefined && !calls.has(message.toolCallId)) lastOrphan = i;
  });
  const settledFrom = groupMessages(newest).find((group) => group.start > lastOrphan)?.start ?? newest.length;
  let settled = 0;
  let total = 0;
  let user = false;
  newest.forEach((message, i) => {
    const tokens = counter.countMessage(message);
    total += tokens;
    if (i < settledFrom) return;
    settled += tokens;
    user ||= message.role === 'user';
  });
  // A first message the agent loop would take for instructions (a stored system or context one) is read past.
  const first = newest[0]!.role;
  if (settled > maxTokens && user && first !== 'system' && first !== 'context') return 0;
  const average = Math.max(TOKENS_PER_MESSAGE, total / newest.length);
  return Math.max(1, Math.ceil(Math.max(1, maxTokens + 1 - settled) / average));
}
