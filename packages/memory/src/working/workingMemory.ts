import {
  ConfigurationError,
  type ContextProvider,
  type ModelClient,
  type ModelInputContext,
  type ModelMessage,
} from '@baton/core';
import { olderMessagesForBudget } from './historyNeed.js';
import { HistorySummarizer } from './historySummarizer.js';
import { groupMessages } from './messageGroups.js';
import { branchSummaryCache } from './summaryState.js';
import { TOKENS_PER_MESSAGE, TokenCounter, type TokenEncoding } from './tokenCounter.js';

/** The start of the summary message's text. */
const SUMMARY_LABEL: ModelMessage = { role: 'context', content: 'Summary of the earlier part of this conversation:\n' };

/** How history that does not fit is handled: dropped, or replaced by a model-written summary. */
export type TrimStrategy = 'drop-oldest' | 'summarize';

/** Options of {@link WorkingMemory}. */
export interface WorkingMemoryOptions {
  /** Token budget of the whole model input (instructions, context, history), counted by {@link TokenCounter}. */
  maxTokens: number;
  /** The model the input is for; picks the encoding ({@link encodingForModel}). Default encoding `o200k_base`. */
  model?: string;
  /** The encoding to count with, overriding `model`. */
  encoding?: TokenEncoding;
  /** Keep the conversation's first user message even when older history is dropped (default false). */
  pinFirstUserMessage?: boolean;
  /** Default `'drop-oldest'`; `'summarize'` needs `summarizer`. */
  strategy?: TrimStrategy;
  /** The model that writes summaries of dropped history (strategy `'summarize'`). */
  summarizer?: ModelClient;
  /** Tokens set aside for the summary message (default 256). */
  summaryMaxTokens?: number;
  /**
   * Called when the summariser fails (the input is then built as with `'drop-oldest'`, so a turn
   * never fails because of its summary), or when a summary is too large to keep in branch state
   * (`ProviderStateTooLargeError`; the summary is still used). Default: nothing is reported.
   */
  onError?: (error: unknown) => void;
}

/**
 * Working memory: shapes every model input to fit a token budget. The input arrives as
 * `[system instructions, …history]` (history ending with the newest user message, or with tool
 * results within a turn), with the turn's context messages just before the newest user message
 * (where the agent loop puts them, so earlier history keeps a stable prefix) or right after the
 * system messages, and leaves as system instructions (plus one summary message under
 * `'summarize'`) → the newest part of history that fits → the turn's context → the newest user
 * message and what followed it in the turn. History is kept newest-first by whole groups: an assistant message
 * with tool calls and all its tool results are kept or dropped together, and no group older than a
 * dropped one is kept (except a pinned first user message). System, context and the newest user
 * message are always kept, even when they alone exceed the budget.
 *
 * Under `'summarize'`, in a session (the handoff runtime passes a context), summaries are kept in
 * this provider's slice of branch state, `provider:working-memory` → `summaries`: at most 4 (the
 * newest), each keyed by a hash of the ids of the messages it covers and at most `summaryMaxTokens`
 * tokens, within the slice's bound of 64 KiB of JSON. So they are stored with the session, a
 * restarted process reuses them instead of asking the model again (and builds the same input), a
 * fork starts from the summaries as of its fork point (never one of messages it does not have), and
 * deleting or erasing the session deletes them. Called without a context, summaries are cached in
 * this object (the newest 64, lost with the process).
 *
 * @throws {ConfigurationError} from the constructor for a non-positive `maxTokens`, or `'summarize'` without `summarizer`
 * @example
 * ```ts
 * import { WorkingMemory } from '@baton/memory';
 * const memory = new WorkingMemory({ maxTokens: 8000, model: 'gpt-4.1-mini', pinFirstUserMessage: true });
 * const input = await memory.prepareModelInput(messages);
 * memory.countTokens(input) <= 8000; // true unless the instructions alone are larger
 * ```
 */
export class WorkingMemory implements ContextProvider {
  /** The context provider's name, `'working-memory'`. */
  readonly name = 'working-memory';
  /** The token budget of a whole model input (tokens, as {@link counter} counts them). */
  readonly maxTokens: number;
  /** How history that does not fit is handled. */
  readonly strategy: TrimStrategy;
  /** The counter used for the budget. */
  readonly counter: TokenCounter;
  readonly #pinFirst: boolean;
  readonly #summaryMaxTokens: number;
  readonly #summarizer: HistorySummarizer | undefined;
  readonly #onError: ((error: unknown) => void) | undefined;

  /**
   * @param options `{ maxTokens, model?, encoding?, pinFirstUserMessage?, strategy?, summarizer?, summaryMaxTokens?, onError? }`
   *   ({@link WorkingMemoryOptions}); token figures are in tokens of the chosen encoding
   * @throws {ConfigurationError} for a `maxTokens` that is not a positive integer, or strategy `'summarize'` without `summarizer`
   */
  constructor(options: WorkingMemoryOptions) {
    if (!Number.isInteger(options.maxTokens) || options.maxTokens <= 0) {
      throw new ConfigurationError(
        `WorkingMemory maxTokens must be a positive integer, got ${JSON.stringify(options.maxTokens)}.`,
      );
    }
    this.strategy = options.strategy ?? 'drop-oldest';
    if (this.strategy === 'summarize' && options.summarizer === undefined) {
      throw new ConfigurationError(
        "WorkingMemory strategy 'summarize' needs a summarizer model: pass { summarizer: someModelClient }, or use strategy 'drop-oldest'.",
      );
    }
    const counterOptions: { model?: string; encoding?: TokenEncoding } = {};
    if (options.model !== undefined) counterOptions.model = options.model;
    if (options.encoding !== undefined) counterOptions.encoding = options.encoding;
    this.counter = new TokenCounter(counterOptions);
    this.maxTokens = options.maxTokens;
    this.#pinFirst = options.pinFirstUserMessage ?? false;
    this.#summaryMaxTokens = options.summaryMaxTokens ?? 256;
    this.#summarizer =
      this.strategy === 'summarize' && options.summarizer !== undefined
        ? new HistorySummarizer(options.summarizer, this.counter)
        : undefined;
    this.#onError = options.onError;
  }

  /**
   * The most history messages an input this memory shapes can keep (see `ContextProvider`): every
   * message costs at least the chat overhead of 3 tokens, so no input within `maxTokens` holds more
   * than `maxTokens / 3` of them. `undefined` under `pinFirstUserMessage` (the first message may be
   * anywhere) and `'summarize'` (the summary covers the dropped history): then a session is opened
   * with its whole history.
   * @example
   * ```ts
   * new WorkingMemory({ maxTokens: 3000 }).maxHistoryMessages; // 1000
   * ```
   */
  get maxHistoryMessages(): number | undefined {
    if (this.#pinFirst || this.#summarizer !== undefined) return undefined;
    return Math.max(1, Math.floor(this.maxTokens / TOKENS_PER_MESSAGE));
  }

  /**
   * How many older messages its model inputs may still need, given the newest part of a history
   * (see `ContextProvider`): `0` once that part settles every input, i.e. from past any tool result
   * whose call it lacks it holds a user message and costs more than `maxTokens` (counted as the
   * budget is), so trimming stops inside it; else an estimate from its messages' average cost.
   * `undefined` under `pinFirstUserMessage` and `'summarize'` (the first message, the summary of the
   * rest: the whole history counts). The handoff runtime opens a session reading backwards until `0`.
   * @param newest the newest messages of a history, oldest first (model messages)
   * @returns `0`, about how many older messages to read next (≥ 1), or `undefined`
   * @example
   * ```ts
   * const memory = new WorkingMemory({ maxTokens: 2000 });
   * memory.olderHistoryNeeded([{ role: 'user', content: 'Refund order 1234' }]); // 222: 1,992 more tokens at 9 a message
   * memory.olderHistoryNeeded([]); // 63: a first page, guessing 32 tokens a message
   * ```
   */
  olderHistoryNeeded(newest: readonly ModelMessage[]): number | undefined {
    if (this.#pinFirst || this.#summarizer !== undefined) return undefined;
    return olderMessagesForBudget(newest, this.counter, this.maxTokens);
  }

  /**
   * Tokens of a model input as this memory counts them ({@link TokenCounter.countMessages}).
   * @param messages a model input
   * @returns tokens, including the chat overhead (0 for no messages)
   */
  countTokens(messages: readonly ModelMessage[]): number {
    return this.counter.countMessages(messages);
  }

  /** How many summaries the summariser has asked its model for (0 without one). */
  get summaryCalls(): number {
    return this.#summarizer?.calls ?? 0;
  }

  /**
   * Builds the model input within the budget (see the class description).
   *
   * @param messages `[system, …history]` with the turn's `context` messages just before the newest user message (or right after the system messages); context is always kept
   * @param context the session branch and this provider's state (given by the handoff runtime): where summaries
   *   are kept
   * @returns a new array of the same message objects, plus a summary `context` message when
   *   strategy `'summarize'` dropped anything; the input itself when it already fits (copied)
   * @throws nothing of its own: a failing summariser is reported to `onError` and the input is built as with `'drop-oldest'`
   */
  async prepareModelInput(messages: readonly ModelMessage[], context?: ModelInputContext): Promise<ModelMessage[]> {
    if (this.countTokens(messages) <= this.maxTokens) return [...messages];
    let leadLength = 0;
    while (
      leadLength < messages.length &&
      (messages[leadLength]!.role === 'system' || messages[leadLength]!.role === 'context')
    )
      leadLength += 1;
    const lead = messages.slice(0, leadLength);
    const history = messages.slice(leadLength);
    const groups = groupMessages(history);
    const required = this.#requiredGroups(groups);

    // Under 'summarize', room for the summary message is set aside (with 2 tokens of slack for BPE merges at its label).
    const budget =
      this.#summarizer === undefined
        ? this.maxTokens
        : this.maxTokens - this.#summaryMaxTokens - this.counter.countMessage(SUMMARY_LABEL) - 2;
    let used = this.countTokens([...lead, ...[...required].flatMap((i) => groups[i]!.messages)]);
    const kept = new Set(required);
    for (let i = groups.length - 1; i >= 0; i--) {
      if (required.has(i)) continue;
      const cost = groups[i]!.messages.reduce((sum, m) => sum + this.counter.countMessage(m), 0);
      if (used + cost > budget) break;
      kept.add(i);
      used += cost;
    }
    const dropped = groups.filter((_, i) => !kept.has(i)).flatMap((g) => g.messages);
    const summary = dropped.length > 0 ? await this.#summary(dropped, context) : undefined;
    const body = groups.filter((_, i) => kept.has(i)).flatMap((g) => g.messages);
    return summary === undefined ? [...lead, ...body] : [...lead, summary, ...body];
  }

  /** The groups always kept: the one holding the newest user message, the pinned first user message's, and the turn's context (placed just before the newest user message). */
  #requiredGroups(groups: readonly { messages: ModelMessage[] }[]): Set<number> {
    const required = new Set<number>();
    groups.forEach((g, i) => {
      if (g.messages.some((m) => m.role === 'context')) required.add(i);
    });
    const userGroups = groups.flatMap((g, i) => (g.messages.some((m) => m.role === 'user') ? [i] : []));
    const newest = userGroups.at(-1);
    if (newest !== undefined) required.add(newest);
    else if (groups.length > 0) required.add(groups.length - 1);
    const first = userGroups[0];
    if (this.#pinFirst && first !== undefined) required.add(first);
    return required;
  }

  async #summary(dropped: readonly ModelMessage[], context?: ModelInputContext): Promise<ModelMessage | undefined> {
    if (this.#summarizer === undefined) return undefined;
    try {
      const cache = context === undefined ? undefined : branchSummaryCache(context.state, this.#onError);
      const text = await this.#summarizer.summarize(dropped, this.#summaryMaxTokens, cache);
      return text === '' ? undefined : { role: 'context', content: `${SUMMARY_LABEL.content}${text}` };
    } catch (error) {
      this.#onError?.(error);
      return undefined;
    }
  }
}
