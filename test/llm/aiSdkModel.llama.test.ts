/**
 * Baton's AI SDK adapter (`aisdk`) over the AI SDK's OpenAI-compatible provider, against
 * llama-cpp-python's server (see test/support/llamaServer.ts). Asserts the events Baton makes of the
 * real wire, never the wording.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelMessage, ModelStreamEvent } from '@baton/core';
import { aisdk } from '@baton/ai-sdk';
import { describe, expect, it } from 'vitest';
import { llamaTestServer } from '../support/llamaTestServer.js';

const server = llamaTestServer();
const llama = createOpenAICompatible({
  name: 'llama-cpp',
  baseURL: server.baseURL,
  apiKey: 'sk-local',
  includeUsage: true,
});
const model = aisdk(llama(server.model), { maxRetries: 0, temperature: 0, maxOutputTokens: 24 });

const question: ModelMessage[] = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Where is my order A-17?' },
];

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('aisdk(createOpenAICompatible(…)) on llama-cpp-python', () => {
  it('streams a reply as several text deltas, then usage and one finish', async () => {
    const events = await collect(model.stream({ messages: question, tools: [] }));
    expect(events.filter((e) => e.type === 'text.delta').length).toBeGreaterThan(1);
    expect(events.at(-1)?.type).toBe('finish');
    expect(['stop', 'length']).toContain((events.at(-1) as { finishReason: string }).finishReason);
    // The server streams no token counts, so the adapter reports the call with zero tokens.
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ usage: { requests: 1 } });
  });
});
