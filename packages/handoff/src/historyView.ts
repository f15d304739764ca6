import type { Message } from '@baton/core';
import type { HandoffHistoryMode } from './handoffTypes.js';
import { isHandoffToolName } from './handoffTools.js';

/**
 * A branch's history held in memory, with the view agents get: by default without handoff tool
 * calls and their results (the stored history keeps them). Both grow incrementally as messages
 * are committed; nothing is re-read or re-filtered per step.
 *
 * @example
 * ```ts
 * const view = new HistoryView('omit');
 * view.append(await store.readMessages(sessionId, branchId));
 * executorInput.history = view.forAgent();
 * ```
 */
export class HistoryView {
  /** Every message of the branch, oldest first (read-only for callers). */
  readonly messages: Message[] = [];
  readonly #filtered: Message[];
  readonly #omit: boolean;
  /** Length of the filtered view before the last message was appended. */
  #filteredBeforeLast = 0;

  constructor(mode: HandoffHistoryMode = 'omit') {
    this.#omit = mode === 'omit';
    this.#filtered = this.#omit ? [] : this.messages;
  }

  /** The seq of the last message (0 when empty). */
  get headSeq(): number {
    return this.messages.at(-1)?.seq ?? 0;
  }

  /** The last message, if any. */
  get last(): Message | undefined {
    return this.messages.at(-1);
  }

  /** Adds committed messages (in seq order). */
  append(messages: readonly Message[]): void {
    for (const message of messages) {
      this.#filteredBeforeLast = this.#filtered.length;
      this.messages.push(message);
      if (!this.#omit) continue;
      const visible = withoutHandoffs(message);
      if (visible !== undefined) this.#filtered.push(visible);
    }
  }

  /**
   * The history an agent sees. When the branch ends with an assistant message whose tool calls are
   * still unanswered (a paused or interrupted step), that message is given whole, so the executor
   * answers every call, handoffs included.
   */
  forAgent(): readonly Message[] {
    const last = this.last;
    if (!this.#omit || last?.role !== 'assistant' || !last.toolCalls?.length) return this.#filtered;
    return [...this.#filtered.slice(0, this.#filteredBeforeLast), last];
  }
}

/** A message as agents see it: handoff tool calls and results removed; `undefined` when nothing is left. */
function withoutHandoffs(message: Message): Message | undefined {
  if (message.role === 'tool') return isHandoffToolName(message.toolName) ? undefined : message;
  if (message.role !== 'assistant' || message.toolCalls === undefined) return message;
  const calls = message.toolCalls.filter((call) => !isHandoffToolName(call.name));
  if (calls.length === message.toolCalls.length) return message;
  if (calls.length > 0) return { ...message, toolCalls: calls };
  if (message.content === '') return undefined;
  const { toolCalls: _dropped, ...rest } = message;
  return rest;
}
