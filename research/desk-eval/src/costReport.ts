import {
  addUsage,
  type BatonEvent,
  emptyUsage,
  type ModelClient,
  type ModelRequest,
  type ModelStreamEvent,
  type Usage,
} from '@baton/core';
import { TokenCounter } from '@baton/memory';

/**
 * Wraps a model client so every call reports token usage: the model's own when it reports any,
 * otherwise counted with `@baton/memory`'s `TokenCounter` (the OpenAI BPE encodings working memory
 * counts with): the input as the chat messages it was sent, the output as its text and tool calls.
 * The offline desk models report none, so their cost is what a model with the same inputs and
 * outputs would bill.
 *
 * @example
 * ```ts
 * const counted = mapDeskModels(models, (model) => new CountedModel(model));
 * ```
 */
export class CountedModel implements ModelClient {
  readonly #counter: TokenCounter;

  constructor(readonly inner: ModelClient) {
    this.#counter = new TokenCounter({ model: inner.model });
  }

  /** The wrapped model's name. */
  get model(): string {
    return this.inner.model;
  }

  /** The wrapped model's stream; when it ends without usage, a counted `usage` event is added before its `finish`. */
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    let reported = false;
    let output = 0;
    let finish: ModelStreamEvent | undefined;
    for await (const event of this.inner.stream(request)) {
      if (event.type === 'usage' && event.usage.inputTokens + event.usage.outputTokens > 0) reported = true;
      else if (event.type === 'text.delta') output += this.#counter.countText(event.delta);
      else if (event.type === 'tool_call')
        output += this.#counter.countText(event.toolCall.name) + this.#counter.countText(event.toolCall.arguments);
      if (event.type === 'finish') finish = event;
      else yield event;
    }
    if (!reported) {
      const inputTokens = this.#counter.countMessages(request.messages);
      yield {
        type: 'usage',
        usage: { inputTokens, outputTokens: output, totalTokens: inputTokens + output, requests: 0 },
      };
    }
    if (finish !== undefined) yield finish;
  }
}

/** Tokens per conversation and per agent over a replay (see {@link CostMeter}). */
export interface CostReport {
  /** Every model call of the replay. */
  total: Usage;
  /** Per session id, in first-seen order. */
  perConversation: Record<string, Usage>;
  /** Per agent, in first-seen order. */
  perAgent: Record<string, Usage>;
}

/**
 * Adds up the `model.completed` events of a replay (each carries its call's usage) per conversation
 * and per agent: the cost report printed with the routing report.
 */
export class CostMeter {
  readonly #perConversation = new Map<string, Usage>();
  readonly #perAgent = new Map<string, Usage>();
  #total = emptyUsage();

  /** Takes any event; counts `model.completed`. */
  observe(event: BatonEvent): void {
    if (event.type !== 'model.completed') return;
    this.#total = addUsage(this.#total, event.usage);
    this.#perConversation.set(
      event.sessionId,
      addUsage(this.#perConversation.get(event.sessionId) ?? emptyUsage(), event.usage),
    );
    this.#perAgent.set(event.agent, addUsage(this.#perAgent.get(event.agent) ?? emptyUsage(), event.usage));
  }

  /**
   * Adds another meter's counts to this one: its total, and each of its conversations and agents in
   * its first-seen order (after this meter's own). Meters of single conversations added in the
   * conversations' order give the same report as one meter that saw them one after another.
   * @param other a meter (left unchanged), or a meter's {@link CostReport} (as a worker thread sends it)
   * @returns this meter
   */
  add(other: CostMeter | CostReport): this {
    const report = other instanceof CostMeter ? other.report() : other;
    this.#total = addUsage(this.#total, report.total);
    for (const [sessionId, usage] of Object.entries(report.perConversation)) {
      this.#perConversation.set(sessionId, addUsage(this.#perConversation.get(sessionId) ?? emptyUsage(), usage));
    }
    for (const [agent, usage] of Object.entries(report.perAgent))
      this.#perAgent.set(agent, addUsage(this.#perAgent.get(agent) ?? emptyUsage(), usage));
    return this;
  }

  /** The totals so far. */
  report(): CostReport {
    return {
      total: this.#total,
      perConversation: Object.fromEntries(this.#perConversation),
      perAgent: Object.fromEntries(this.#perAgent),
    };
  }
}

/**
 * The cost report as text: totals, the mean and the largest conversation, then one line per agent
 * (calls, input and output tokens, share of all tokens).
 */
export function formatCostReport(report: CostReport): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const { total } = report;
  const conversations = Object.entries(report.perConversation);
  if (conversations.length === 0 || total.requests === 0) return 'Tokens: no model calls';
  const largest = conversations.reduce((a, b) => (b[1].totalTokens > a[1].totalTokens ? b : a));
  const lines = [
    `Tokens: ${n(total.totalTokens)} (${n(total.inputTokens)} in, ${n(total.outputTokens)} out) over ${n(total.requests)} model calls; ` +
      `${n(Math.round(total.totalTokens / conversations.length))} per conversation (largest: ${largest[0]}, ${n(largest[1].totalTokens)})`,
    `${'agent'.padEnd(12)}${'calls'.padStart(8)}${'input'.padStart(12)}${'output'.padStart(10)}${'share'.padStart(8)}`,
  ];
  for (const [agent, usage] of Object.entries(report.perAgent).sort((a, b) => b[1].totalTokens - a[1].totalTokens)) {
    const share = total.totalTokens === 0 ? 0 : (100 * usage.totalTokens) / total.totalTokens;
    lines.push(
      `${agent.padEnd(12)}${n(usage.requests).padStart(8)}${n(usage.inputTokens).padStart(12)}${n(usage.outputTokens).padStart(10)}${`${share.toFixed(1)}%`.padStart(8)}`,
    );
  }
  return lines.join('\n');
}
