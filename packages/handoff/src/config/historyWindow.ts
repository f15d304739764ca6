import { ConfigurationError, type ContextProvider, type ModelMessage } from '@baton/core';

/**
 * A bounded history for model input: each model call sees the newest `messages` messages of the
 * conversation (the agent's instructions and recalled context aside), as OpenAI Agents'
 * `session.getItems(limit)` and LangChain's `trimMessages({ strategy: 'last' })` give. A window never
 * starts with a tool result whose call fell outside it (those results are left out too), so no tool
 * result reaches the model without its call. The stored history is never changed; with a window, a
 * session loads only the messages the window and recovery need, not the whole branch.
 *
 * @example
 * ```ts
 * import { HandoffBuilder } from '@baton/handoff';
 * const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).historyWindow({ messages: 100 }).build();
 * ```
 */
export interface HistoryWindow {
  /** How many of the newest messages the model sees (an integer ≥ 1). */
  messages: number;
}

/**
 * Checks a {@link HistoryWindow} option.
 * @throws {ConfigurationError} when `messages` is not an integer ≥ 1
 */
export function assertHistoryWindow(window: HistoryWindow): void {
  const size = (window as { messages?: unknown } | null)?.messages;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1) {
    throw new ConfigurationError(
      `historyWindow({ messages }) takes an integer ≥ 1 (the newest messages a model call sees), not ${JSON.stringify(window)}.`,
    );
  }
}

/**
 * Where a window of `size` messages starts in `messages` (an index): `size` messages back from the
 * end, counting only messages at or after `from`, then, when that cuts something off, past any tool
 * results it would start with (their call is outside the window). Messages with role `context` are
 * not counted and not cut for (recalled context, placed by the agent loop, is not conversation).
 * The answer depends only on the messages from one counted message before the window on, so a
 * caller may pass just that tail.
 *
 * @param messages stored or model messages, oldest first
 * @param size the window's size in messages (≥ 1)
 * @param from the first index that may be counted (0 for a history; past the instructions for a model input)
 * @returns the index of the first message the window keeps
 * @example
 * ```ts
 * import { windowStart } from '@baton/handoff';
 * windowStart([{ role: 'user' }, { role: 'assistant' }, { role: 'tool' }, { role: 'assistant' }], 2); // 3: not the tool result whose call was cut off
 * ```
 */
export function windowStart(messages: readonly { role: string }[], size: number, from = 0): number {
  let start = messages.length;
  for (let counted = 0; start > from && counted < size; ) {
    start -= 1;
    if (messages[start]!.role !== 'context') counted += 1;
  }
  let cut = false;
  for (let i = start - 1; i >= from && !cut; i -= 1) cut = messages[i]!.role !== 'context';
  if (!cut) return from;
  while (start < messages.length && messages[start]!.role === 'tool') start += 1;
  return start;
}

/**
 * Shapes one model input to a window (the model-input step of {@link HistoryWindow}): the leading
 * system messages (instructions) stay, recalled context stays where the agent loop put it, and of
 * the rest only the newest `size` messages are kept ({@link windowStart}).
 *
 * @returns `messages` itself when it fits, else a shorter copy
 * @example
 * ```ts
 * import { windowModelInput } from '@baton/handoff';
 * const input = windowModelInput([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'a' }, { role: 'user', content: 'b' }], 1);
 * // [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'b' }]
 * ```
 */
export function windowModelInput(messages: readonly ModelMessage[], size: number): readonly ModelMessage[] {
  let head = 0;
  while (head < messages.length && messages[head]!.role === 'system') head += 1;
  const start = windowStart(messages, size, head);
  let dropped = false;
  for (let i = head; i < start && !dropped; i += 1) dropped = messages[i]!.role !== 'context';
  if (!dropped) return messages;
  const kept = messages.slice(0, head);
  for (let i = head; i < start; i += 1) if (messages[i]!.role === 'context') kept.push(messages[i]!);
  for (let i = start; i < messages.length; i += 1) kept.push(messages[i]!);
  return kept;
}

/**
 * How many of the newest history messages model inputs can keep, which is what opening a session
 * must read (agents see no older one): the `historyWindow` (applied first), bounded further by the
 * `maxHistoryMessages` of the first provider that shapes model inputs (it sees the whole history or
 * the window; every later shaper sees only its output). `undefined`: no bound, the whole history.
 *
 * @param window the workflow's `historyWindow` in messages, or `undefined`
 * @param providers the workflow's context providers, in order
 * @returns the bound in messages (≥ 1), or `undefined`
 * @throws {ConfigurationError} when that provider's `maxHistoryMessages` is not an integer ≥ 1
 * @example
 * ```ts
 * import { historyBound } from '@baton/handoff';
 * historyBound(undefined, [new WorkingMemory({ maxTokens: 3000 })]); // 1000
 * historyBound(100, [new WorkingMemory({ maxTokens: 3000 })]); // 100
 * ```
 */
export function historyBound(window: number | undefined, providers: readonly ContextProvider[]): number | undefined {
  const first = providers.find((provider) => provider.prepareModelInput !== undefined);
  const limit = first?.maxHistoryMessages;
  if (limit === undefined) return window;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ConfigurationError(
      `Context provider ${JSON.stringify(first?.name)} has maxHistoryMessages ${JSON.stringify(limit)}; it must be an integer ≥ 1 (or left undefined when its model inputs may keep any message).`,
    );
  }
  return window === undefined ? limit : Math.min(window, limit);
}
