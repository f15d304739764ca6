import type { ModelStreamEvent } from '@baton/core';

/** What an offline model decided: text for the user, or one tool call. */
export type ModelDecision =
  | { type: 'text'; text: string }
  | { type: 'tool'; id: string; name: string; args: Record<string, unknown> };

/**
 * Streams a decision the way a real model streams its answer: text in word-sized deltas, or one
 * complete tool call; then usage (no tokens: nothing was sent to a provider) and `finish`.
 *
 * @example
 * ```ts
 * for await (const event of streamDecision({ type: 'text', text: 'Hello there' })) console.log(event.type);
 * ```
 */
export async function* streamDecision(decision: ModelDecision): AsyncGenerator<ModelStreamEvent> {
  if (decision.type === 'text') {
    for (const delta of decision.text.match(/\S+\s*|\s+/g) ?? []) yield { type: 'text.delta', delta };
  } else {
    yield {
      type: 'tool_call',
      toolCall: { id: decision.id, name: decision.name, arguments: JSON.stringify(decision.args) },
    };
  }
  yield { type: 'usage', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 1 } };
  yield { type: 'finish', finishReason: decision.type === 'tool' ? 'tool_calls' : 'stop' };
}
