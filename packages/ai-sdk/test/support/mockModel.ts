import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** One scripted answer of {@link scriptedLanguageModel}: text, tool calls (input as the model's JSON text), usage, or an error to throw. */
export interface MockAnswer {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; input: string }>;
  usage?: { input: number; output: number };
  /** Thrown by `doStream` (as a provider fails before streaming). */
  error?: Error;
  /** Streamed as an `error` part after the text. */
  streamError?: unknown;
  /** Holds the stream open after the text until the call is aborted. */
  stall?: boolean;
}

/** The AI SDK stream parts of one answer, as a provider streams them. */
export function answerParts(answer: MockAnswer): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (answer.text !== undefined && answer.text !== '') {
    parts.push({ type: 'text-start', id: 't1' });
    for (const piece of answer.text.match(/.{1,6}/gs) ?? []) parts.push({ type: 'text-delta', id: 't1', delta: piece });
    parts.push({ type: 'text-end', id: 't1' });
  }
  if (answer.streamError !== undefined) {
    parts.push({ type: 'error', error: answer.streamError });
    return parts;
  }
  for (const call of answer.toolCalls ?? [])
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input });
  const usage = answer.usage ?? { input: 10, output: 5 };
  parts.push({
    type: 'finish',
    finishReason: { unified: (answer.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop', raw: undefined },
    usage: {
      inputTokens: { total: usage.input, noCache: usage.input, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: usage.output, text: usage.output, reasoning: 0 },
    },
  });
  return parts;
}

/**
 * The AI SDK's own mock language model (`MockLanguageModelV3` from `ai/test`) answering from a
 * script, or from a function of the call (for agents whose answer depends on what they were sent).
 * Every call's options are kept in `model.doStreamCalls`.
 */
export function scriptedLanguageModel(
  script: MockAnswer[] | ((call: LanguageModelV3CallOptions, index: number) => MockAnswer),
  modelId = 'mock-model',
): MockLanguageModelV3 {
  let index = 0;
  return new MockLanguageModelV3({
    modelId,
    doStream: async (call) => {
      const at = index;
      index += 1;
      const answer = typeof script === 'function' ? script(call, at) : script[at];
      if (answer === undefined) throw new Error(`The mock model has no answer #${at + 1}.`);
      if (answer.error !== undefined) throw answer.error;
      if (answer.stall === true) {
        const parts = answerParts({ text: answer.text ?? '' }).slice(0, -1);
        const stream = new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            call.abortSignal?.addEventListener('abort', () => controller.error(call.abortSignal?.reason), {
              once: true,
            });
          },
        });
        return { stream };
      }
      return { stream: simulateReadableStream({ chunks: answerParts(answer), chunkDelayInMs: 0 }) };
    },
  });
}
