import { createRequire } from 'node:module';
import type { ModelMessage } from '@baton/core';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';
import { modelToEncodingMap } from 'gpt-tokenizer/mapping';

/** The OpenAI BPE encodings working memory counts with. */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

/**
 * Chat overhead per message, as OpenAI's cookbook counts it for current chat models
 * ("How to count tokens with tiktoken": 3 tokens per message, 3 to prime the reply). Agent names are
 * not counted: the chat clients do not send them.
 */
export const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING_TOKENS = 3;
/**
 * Allowance for the label a client puts before a `context` message's text (e.g. `@baton/core/openai`
 * sends it as a system message starting with "Recalled context from earlier conversations…", 15 tokens).
 */
export const CONTEXT_LABEL_TOKENS = 20;
/** Per tool call: its `type: "function"` wrapper and field separators (an estimate; the cookbook gives none). */
const TOKENS_PER_TOOL_CALL = 4;

/**
 * The encoding a model uses: `o200k_base` for the GPT-5, GPT-4.1, GPT-4o and o-series families,
 * `cl100k_base` for GPT-4 (turbo) and GPT-3.5 and the embedding models, by `gpt-tokenizer`'s model
 * map; an unknown name that is `gpt-4` or starts with `gpt-4-` or `gpt-3.5` gets `cl100k_base`, any other
 * unknown name (including non-OpenAI models behind a compatible API) `o200k_base`.
 *
 * @param model a model name such as `'gpt-4.1-mini'`; `undefined` gives `o200k_base`
 * @example
 * ```ts
 * import { encodingForModel } from '@baton/memory';
 * encodingForModel('gpt-4o-mini'); // 'o200k_base'
 * encodingForModel('gpt-3.5-turbo'); // 'cl100k_base'
 * ```
 */
export function encodingForModel(model: string | undefined): TokenEncoding {
  if (model === undefined) return 'o200k_base';
  const known = (modelToEncodingMap as Record<string, string | undefined>)[model];
  if (known === 'cl100k_base') return 'cl100k_base';
  if (known !== undefined) return 'o200k_base';
  return /^(gpt-4(-|$)|gpt-3\.5)/.test(model) ? 'cl100k_base' : 'o200k_base';
}

/** What a counter uses of an encoding's `gpt-tokenizer` module. */
type EncodingApi = Pick<typeof O200k, 'encode' | 'decode'>;

const requireModule = createRequire(import.meta.url);
const encodings = new Map<TokenEncoding, EncodingApi>();

/**
 * The encoding's `gpt-tokenizer` module, loaded on first use (synchronously, its CommonJS build): its
 * BPE ranks stay on the heap once loaded, about 20 MB for `o200k_base` and 10 MB for `cl100k_base`,
 * so a process loads only the encodings its counters use, and none before the first counter.
 */
function encodingApi(encoding: TokenEncoding): EncodingApi {
  let api = encodings.get(encoding);
  if (api === undefined) {
    api = requireModule(`gpt-tokenizer/encoding/${encoding}`) as EncodingApi;
    encodings.set(encoding, api);
  }
  return api;
}

/** How many counted texts a {@link TokenCounter} remembers (a model input's messages are counted again at every call). */
const COUNTED_TEXTS = 10_000;

/**
 * Counts tokens with an OpenAI BPE encoding (the `gpt-tokenizer` library), text alone or whole model
 * inputs with the chat overhead OpenAI's cookbook describes. The first counter of an encoding loads its
 * ranks (about 20 MB of heap for `o200k_base`, 10 MB for `cl100k_base`); importing `@baton/memory` loads none.
 *
 * @example
 * ```ts
 * import { TokenCounter } from '@baton/memory';
 * const counter = new TokenCounter({ model: 'gpt-4.1-mini' });
 * counter.countText('I was charged twice'); // 4
 * counter.countMessages([{ role: 'user', content: 'Hi' }]); // 3 + 1 + 1 + 3 = 8
 * ```
 */
export class TokenCounter {
  /** The encoding it counts with. */
  readonly encoding: TokenEncoding;
  readonly #api: EncodingApi;
  /** Texts already counted, with their tokens (at most {@link COUNTED_TEXTS}; cleared when full). */
  readonly #counted = new Map<string, number>();

  /**
   * @param options `{ model?, encoding? }`: `encoding` wins; else the one of `model` ({@link encodingForModel}); default `o200k_base`
   */
  constructor(options: { model?: string; encoding?: TokenEncoding } = {}) {
    this.encoding = options.encoding ?? encodingForModel(options.model);
    this.#api = encodingApi(this.encoding);
  }

  /**
   * Tokens of `text` alone (special-token text such as `<|endoftext|>` is counted as plain text).
   * @param text any string
   * @returns its number of tokens (0 for `''`)
   */
  countText(text: string): number {
    if (text === '') return 0;
    const known = this.#counted.get(text);
    if (known !== undefined) return known;
    const tokens = this.#api.encode(text, { disallowedSpecial: new Set() }).length;
    // A model input repeats the history of the one before it: each text is encoded once, not once per call.
    if (this.#counted.size >= COUNTED_TEXTS) this.#counted.clear();
    this.#counted.set(text, tokens);
    return tokens;
  }

  /**
   * Tokens of one message in a model input: 3 per message, its role (a `context` message counts as
   * a `system` one plus {@link CONTEXT_LABEL_TOKENS}), its text, and for each
   * tool call its id, name, arguments and 4 more; a tool result also counts its `toolCallId`.
   * @param message one model message
   * @returns its tokens (the 3 tokens that prime the reply are not included; see {@link countMessages})
   */
  countMessage(message: ModelMessage): number {
    let tokens =
      TOKENS_PER_MESSAGE +
      this.countText(message.role === 'context' ? 'system' : message.role) +
      this.countText(message.content);
    if (message.role === 'context') tokens += CONTEXT_LABEL_TOKENS;
    for (const call of message.toolCalls ?? []) {
      tokens +=
        TOKENS_PER_TOOL_CALL + this.countText(call.id) + this.countText(call.name) + this.countText(call.arguments);
    }
    if (message.toolCallId !== undefined) tokens += this.countText(message.toolCallId);
    return tokens;
  }

  /**
   * Tokens of a whole model input: every message plus 3 that prime the reply.
   * @param messages a model input
   * @returns tokens (0 for no messages)
   */
  countMessages(messages: readonly ModelMessage[]): number {
    if (messages.length === 0) return 0;
    return messages.reduce((sum, m) => sum + this.countMessage(m), REPLY_PRIMING_TOKENS);
  }

  /**
   * The longest prefix of `text` that is at most `maxTokens` tokens (cut at a token boundary).
   * @param text any string
   * @param maxTokens the most tokens to keep; 0 or less gives `''`
   * @returns `text` itself when it fits, else its first `maxTokens` tokens decoded
   */
  truncate(text: string, maxTokens: number): string {
    const tokens = this.#api.encode(text, { disallowedSpecial: new Set() });
    return tokens.length <= maxTokens ? text : this.#api.decode(tokens.slice(0, Math.max(0, maxTokens)));
  }
}
