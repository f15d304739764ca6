import { InvalidInputError, type Message } from '@baton/core';
import type { HandoffHistoryMode } from '../config/handoffTypes.js';
import { windowStart } from '../config/historyWindow.js';
import { isHandoffToolName } from '../routing/handoffTools.js';

/** Options of {@link HistoryView}: the model input's window, and whether the view starts at the branch's first message. */
export interface HistoryViewOptions {
  /** With a window, {@link HistoryView.forAgent} gives the newest `window` messages (see `HistoryWindow`). */
  window?: number;
  /** Whether the messages appended first are the branch's first (default `true`); `false` for a view loaded from a later seq, whose older part {@link HistoryView.prepend} adds. */
  complete?: boolean;
}

/**
 * A branch's history held in memory, with the view agents get: by default without handoff tool
 * calls and their results (the stored history keeps them). Both grow incrementally as messages
 * are committed; nothing is re-read or re-filtered per step. With a window (the workflow's
 * `historyWindow`) it may hold only the newest part of the branch (`complete` is then `false`; the
 * runtime adds older messages with {@link HistoryView.prepend} when something needs them), and
 * agents see only the window. It also knows which of its newest messages are not stored yet (the handoff runtime writes a turn's messages behind, in one append
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
  /** Every message of the branch held in memory, oldest first: the whole branch when {@link complete}, else its newest part (read-only for callers). */
  readonly messages: Message[] = [];
  readonly #filtered: Message[];
  readonly #omit: boolean;
  readonly #window: number | undefined;
  #complete: boolean;
  /** Length of the filtered view before the last message was appended. */
  #filteredBeforeLast = 0;
  /** How many of `messages` (the oldest) are stored. */
  #storedCount = 0;

  constructor(mode: HandoffHistoryMode = 'omit', options: HistoryViewOptions = {}) {
    this.#omit = mode === 'omit';
    this.#filtered = this.#omit ? [] : this.messages;
    this.#window = options.window;
    this.#complete = options.complete ?? true;
  }

  /** Whether {@link messages} starts at the branch's first message (always, without a window). */
  get complete(): boolean {
    return this.#complete;
  }

  /** The seq of the oldest message held (the head seq + 1 when none is). */
  get firstSeq(): number {
    return this.messages[0]?.seq ?? this.headSeq + 1;
  }

  /** How many held messages agents see (handoff calls and results left out in `'omit'` mode). */
  get visibleCount(): number {
    return this.#filtered.length;
  }

  /** The held messages agents see, oldest first (handoff calls and results left out in `'omit'` mode; read-only). */
  get visible(): readonly Message[] {
    return this.#filtered;
  }

  /** Whether a user message is held (searched from the newest: it is usually near the end). */
  get holdsUserMessage(): boolean {
    const messages = this.messages;
    for (let i = messages.length - 1; i >= 0; i -= 1) if (messages[i]!.role === 'user') return true;
    return false;
  }

  /**
   * Adds the branch's older, stored messages in front of those held (seq order, ending just before
   * {@link firstSeq}).
   * @param options `{ complete }`: whether they start at the branch's first message
   * @throws {InvalidInputError} when they do not end right before the oldest message held
   */
  prepend(older: readonly Message[], options: { complete: boolean }): void {
    const last = older.at(-1);
    if (last !== undefined && this.messages.length > 0 && last.seq !== this.firstSeq - 1) {
      throw new InvalidInputError(
        `HistoryView.prepend: the older messages end at seq ${last.seq}, not right before seq ${this.firstSeq}, the oldest held.`,
      );
    }
    const visible = this.#omit ? older.flatMap((m) => withoutHandoffs(m) ?? []) : older;
    refill(this.messages, older);
    if (this.#omit) refill(this.#filtered, visible);
    this.#storedCount += older.length;
    this.#filteredBeforeLast += visible.length;
    this.#complete = options.complete;
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
    if (index < 0)
      throw new InvalidInputError(
        `markStored(${JSON.stringify(seq)}): this history holds no message with that seq; pass the seq of the last stored message.`,
      );
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
    if (messages.length === 0) return;
    const all = this.messages;
    const filtered = this.#filtered;
    const omit = this.#omit;
    // The filtered length before the last message appended (the only one whose length is kept).
    for (let i = 0; i < messages.length - 1; i += 1) {
      const message = messages[i]!;
      all.push(message);
      if (!omit) continue;
      const visible = withoutHandoffs(message);
      if (visible !== undefined) filtered.push(visible);
    }
    const last = messages[messages.length - 1]!;
    this.#filteredBeforeLast = filtered.length;
    all.push(last);
    if (omit) {
      const visible = withoutHandoffs(last);
      if (visible !== undefined) filtered.push(visible);
    }
  }

  /**
   * The history an agent sees. When the branch ends with an assistant message whose tool calls are
   * still unanswered (a paused or interrupted step), that message is given whole, so the executor
   * answers every call, handoffs included. With a window, only its newest messages
   * ({@link windowStart}).
   */
  forAgent(): readonly Message[] {
    const last = this.last;
    const whole = !this.#omit || last?.role !== 'assistant' || !last.toolCalls?.length;
    const window = this.#window;
    // slice + push, not a spread: a spread of a long history walks it through the iterator protocol.
    if (window === undefined)
      return whole ? this.#filtered : withLast(this.#filtered.slice(0, this.#filteredBeforeLast), last);
    // Only the view's tail is copied: the window and one message before it, where windowStart cuts as on the whole view.
    const filtered = this.#filtered;
    const end = whole ? filtered.length : this.#filteredBeforeLast;
    let from = end;
    for (let counted = whole ? 0 : 1; from > 0 && counted <= window; ) {
      from -= 1;
      if (filtered[from]!.role !== 'context') counted += 1;
    }
    const tail = whole ? filtered.slice(from, end) : withLast(filtered.slice(from, end), last);
    const start = windowStart(tail, window);
    return start === 0 ? tail : tail.slice(start);
  }
}

/** `messages` with `last` pushed onto it (the array itself). */
function withLast(messages: Message[], last: Message): Message[] {
  messages.push(last);
  return messages;
}

/** Puts `older` in front of `target`'s elements, in place (the array's identity is kept). */
function refill(target: Message[], older: readonly Message[]): void {
  if (older.length === 0) return;
  const newer = target.splice(0, target.length);
  for (const message of older) target.push(message);
  for (const message of newer) target.push(message);
}

/** A message as agents see it: handoff tool calls and results removed; `undefined` when nothing is left. */
function withoutHandoffs(message: Message): Message | undefined {
  const { role } = message;
  if (role === 'tool') return isHandoffToolName(message.toolName) ? undefined : message;
  const calls = message.toolCalls;
  if (role !== 'assistant' || calls === undefined) return message;
  // Loops, not some/filter with a closure: this runs once per message when a long history is opened.
  let handoffs = 0;
  for (let i = 0; i < calls.length; i += 1) if (isHandoffToolName(calls[i]!.name)) handoffs += 1;
  if (handoffs === 0) return message; // the usual case: nothing to copy
  if (handoffs === calls.length && message.content === '') return undefined;
  // Copied key by key: a spread or rest pattern of a frozen message takes V8's slow path.
  const copy: Record<string, unknown> = {};
  for (const key in message)
    if (key !== 'toolCalls' && Object.hasOwn(message, key)) copy[key] = message[key as keyof Message];
  if (handoffs < calls.length) {
    const kept: Message['toolCalls'] & {} = [];
    for (const call of calls) if (!isHandoffToolName(call.name)) kept.push(call);
    copy.toolCalls = kept;
  }
  return copy as unknown as Message;
}
