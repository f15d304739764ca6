import { InvalidInputError, type Message } from '@baton/core';
import type { HandoffHistoryMode } from '../workflow/handoffTypes.js';
import { isHandoffToolName } from '../routing/handoffTools.js';

/**
 * A branch's history held in memory, with the view agents get: by default without handoff tool
 * calls and their results (the stored history keeps them). Both grow incrementally as messages
 * are committed; nothing is re-read or re-filtered per step. It also knows which of its newest
 * messages are not stored yet (the handoff runtime writes a turn's messages behind, in one append
 * at each durability point): {@link HistoryView.unstored} and {@link HistoryView.markStored}.
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
  /** How many of `messages` (the oldest) are stored. */
  #storedCount = 0;

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

  /**
   * Messages appended with `{ stored: false }` and not yet marked stored, oldest first (a copy;
   * empty when everything is stored).
   */
  get unstored(): Message[] {
    return this.#storedCount === this.messages.length ? [] : this.messages.slice(this.#storedCount);
  }

  /**
   * Records that every message through `seq` is stored.
   * @throws {InvalidInputError} when `seq` is not the seq of a message of this history
   */
  markStored(seq: number): void {
    const index = this.messages.findLastIndex((m) => m.seq === seq);
    if (index < 0) throw new InvalidInputError(`markStored(${JSON.stringify(seq)}): this history holds no message with that seq; pass the seq of the last stored message.`);
    this.#storedCount = Math.max(this.#storedCount, index + 1);
  }

  /**
   * Adds committed messages (in seq order).
   * @param options `{ stored }`: whether they are already in the store (default `true`, e.g. read
   *   from it); `false` for messages to write later (see {@link HistoryView.unstored})
   * @throws {InvalidInputError} when stored messages would follow unstored ones
   */
  append(messages: readonly Message[], options: { stored?: boolean } = {}): void {
    const stored = options.stored ?? true;
    if (stored && this.#storedCount < this.messages.length && messages.length > 0) {
      throw new InvalidInputError(
        `HistoryView.append: ${messages.length} stored message(s) cannot follow ${this.messages.length - this.#storedCount} unstored one(s); mark those stored first (markStored).`,
      );
    }
    if (stored) this.#storedCount += messages.length;
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
