import { createHash } from 'node:crypto';
import { collectModelResponse, type ModelClient, type ModelMessage } from '@baton/core';
import type { TokenCounter } from './tokenCounter.js';

const INSTRUCTIONS =
  'You condense the earlier part of a customer-support conversation so that an agent can continue it. ' +
  'Write a brief factual summary in plain sentences: what the user wants, facts they gave (names, ids, order numbers, amounts), ' +
  'what was done (tool calls and their outcomes) and what is still open. Do not invent anything. Answer with the summary only.';

/** How many summaries a {@link HistorySummarizer} keeps in its process cache (the newest). */
const CACHE_SIZE = 64;

/**
 * Where summaries are looked up and kept instead of the summariser's process cache, by the key of
 * the exact messages they cover (e.g. working memory's slice of branch state, see `summaryState.ts`).
 */
export interface SummaryCache {
  /** The summary of the messages `key` names, if kept. */
  get(key: string): string | undefined;
  /** Keeps the summary of the messages `key` names (a summary of the whole input of one `summarize` call). */
  set(key: string, summary: string): void;
}

/**
 * Summarises the dropped oldest part of a history through a model, for working memory's
 * `'summarize'` strategy. Summaries are cached by the exact messages they cover, and extended
 * incrementally: when the dropped part grows, only the newly dropped messages are sent, with the
 * previous summary. Long inputs are sent in chunks of at most `chunkTokens` tokens.
 * `WorkingMemory` creates one for strategy `'summarize'`.
 *
 * @example
 * ```ts
 * import { HistorySummarizer, TokenCounter } from '@baton/memory';
 * const summarizer = new HistorySummarizer(model, new TokenCounter({ model: model.model }));
 * const summary = await summarizer.summarize(droppedMessages, 256); // at most 256 tokens
 * ```
 */
export class HistorySummarizer {
  readonly #model: ModelClient;
  readonly #counter: TokenCounter;
  readonly #chunkTokens: number;
  readonly #cache = new Map<string, string>();

  /**
   * @param model the model that writes the summaries
   * @param counter counts the tokens of chunks and summaries
   * @param options `{ chunkTokens? }`: the most transcript tokens sent per call (default 6 000)
   */
  constructor(model: ModelClient, counter: TokenCounter, options: { chunkTokens?: number } = {}) {
    this.#model = model;
    this.#counter = counter;
    this.#chunkTokens = options.chunkTokens ?? 6000;
  }

  #calls = 0;

  /** How many model calls it has made (for tests and metrics). */
  get calls(): number {
    return this.#calls;
  }

  /**
   * A summary of `messages` of at most `maxTokens` tokens.
   * @param messages the model messages to summarise, oldest first
   * @param maxTokens the longest summary, in tokens (a longer answer is cut)
   * @param cache where to look summaries up and keep them instead of the process cache (only the
   *   summary of all of `messages` is kept there, not those of its chunks)
   * @returns the summary text; `''` for no messages
   * @throws whatever the model client throws (Baton errors)
   */
  async summarize(messages: readonly ModelMessage[], maxTokens: number, cache?: SummaryCache): Promise<string> {
    const keys = prefixKeys(messages);
    const lookup = (key: string) => (cache === undefined ? this.#cache.get(key) : cache.get(key));
    let from = messages.length;
    while (from > 0 && lookup(keys[from - 1]!) === undefined) from -= 1;
    let summary = from === 0 ? '' : lookup(keys[from - 1]!)!;
    while (from < messages.length) {
      let to = from;
      let tokens = 0;
      const lines: string[] = [];
      while (to < messages.length) {
        const line = this.#counter.truncate(renderMessage(messages[to]!), this.#chunkTokens);
        const cost = this.#counter.countText(line);
        if (lines.length > 0 && tokens + cost > this.#chunkTokens) break;
        lines.push(line);
        tokens += cost;
        to += 1;
      }
      summary = this.#counter.truncate(await this.#call(summary, lines, maxTokens), maxTokens).trim();
      if (cache === undefined) this.#remember(keys[to - 1]!, summary);
      else if (to === messages.length) cache.set(keys[to - 1]!, summary);
      from = to;
    }
    return summary;
  }

  async #call(previous: string, lines: readonly string[], maxTokens: number): Promise<string> {
    this.#calls += 1;
    const words = Math.max(20, Math.floor(maxTokens * 0.6));
    const body =
      (previous === '' ? '' : `Summary so far:\n${previous}\n\nConversation continues:\n`) +
      `${lines.join('\n')}\n\nWrite the updated summary in at most ${words} words.`;
    const response = await collectModelResponse(
      this.#model.stream({
        messages: [
          { role: 'system', content: INSTRUCTIONS },
          { role: 'user', content: body },
        ],
        tools: [],
        agent: 'working-memory',
      }),
    );
    return response.text;
  }

  #remember(key: string, summary: string): void {
    this.#cache.delete(key);
    this.#cache.set(key, summary);
    if (this.#cache.size > CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
  }
}

/** A message as one transcript line for the summariser. */
function renderMessage(message: ModelMessage): string {
  if (message.role === 'tool')
    return `Tool result (${message.toolName ?? message.toolCallId ?? 'tool'}): ${message.content}`;
  const who =
    message.role === 'assistant' ? `Assistant${message.agent === undefined ? '' : ` (${message.agent})`}` : 'User';
  const calls = (message.toolCalls ?? []).map((c) => ` [calls ${c.name}(${c.arguments})]`).join('');
  return `${who}: ${message.content}${calls}`;
}

/** Key `i` identifies the exact sequence `messages[0..i]` (a rolling SHA-256 over ids, or contents when a message has no id). */
function prefixKeys(messages: readonly ModelMessage[]): string[] {
  const keys: string[] = [];
  let previous = '';
  for (const m of messages) {
    const identity = m.id ?? JSON.stringify([m.role, m.content, m.toolCalls ?? null, m.toolCallId ?? null]);
    previous = createHash('sha256').update(previous).update('\u0000').update(identity).digest('hex');
    keys.push(previous);
  }
  return keys;
}
