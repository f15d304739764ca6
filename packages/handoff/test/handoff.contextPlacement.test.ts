/**
 * Where a turn's context (recalled memory) goes in the model input: just before the newest user
 * message, so the history before it keeps its place and each request repeats the previous turn's
 * request as its prefix (what providers' prompt caching reuses). Context recalled anew every turn
 * must not shift the history.
 */
import { type ContextProvider, InMemoryStore, type ModelMessage } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, scriptedAgent } from './support/helpers.js';

describe('context placement', () => {
  it("puts each turn's context just before its user message, so the next request starts with this one up to that context", async () => {
    const assistant = scriptedAgent('assistant', (request) => ({
      text: `Answer to ${request.messages.at(-1)?.content}`,
    }));
    const recall: ContextProvider = {
      name: 'recall',
      beforeTurn: async ({ input }) => [{ role: 'context', content: `Recalled for "${input}"` }],
    };
    const session = await new HandoffBuilder()
      .participants(assistant)
      .contextProviders(recall)
      .store(new InMemoryStore())
      .build()
      .session({ id: 'ctx-1' });
    for (const text of ['First question', 'Second question', 'Third question']) await collect(session.send(text));

    const requests = assistant.model.requests.map((r) => r.messages.map((m: ModelMessage) => `${m.role}:${m.content}`));
    expect(requests[2]).toEqual([
      'system:You are assistant.',
      'user:First question',
      'assistant:Answer to First question',
      'user:Second question',
      'assistant:Answer to Second question',
      'context:Recalled for "Third question"',
      'user:Third question',
    ]);
    // Everything of the previous request but its context is the next request's prefix.
    for (const [previous, next] of [
      [requests[0]!, requests[1]!],
      [requests[1]!, requests[2]!],
    ] as const) {
      const withoutContext = previous.filter((m) => !m.startsWith('context:'));
      expect(next.slice(0, withoutContext.length)).toEqual(withoutContext);
    }
  });
});
