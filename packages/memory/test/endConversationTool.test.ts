import { AgentExecutor, agent, InMemoryStore } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { EpisodicMemory, endConversationTool } from '../src/index.js';
import { appendConversation, closeSession, runOnStore } from './support/conversation.js';

describe('endConversationTool', () => {
  it('is offered to the model as end_conversation with a required reason', () => {
    expect(endConversationTool.name).toBe('end_conversation');
    expect(endConversationTool.jsonSchema).toMatchObject({
      type: 'object',
      required: ['reason'],
      properties: { reason: { type: 'string' } },
    });
  });

  it("ends the agent's activation with outcome end_conversation, and the closed session becomes an episode", async () => {
    const store = new InMemoryStore();
    await store.createSession({ id: 'chat-5', userId: 'u-42' });
    await appendConversation(store, 'chat-5', [
      { role: 'user', content: 'My refund for order 77 arrived, thanks. That is all, bye!' },
    ]);
    const model = new ScriptedModel([
      {
        text: 'Glad it arrived. Goodbye!',
        toolCalls: [{ name: 'end_conversation', arguments: { reason: 'refund confirmed, user said bye' } }],
      },
    ]);
    const billing = new AgentExecutor(
      agent({
        name: 'billing',
        description: 'Billing.',
        instructions: 'Help with billing.',
        model,
        tools: [endConversationTool],
      }),
    );

    const { outcome } = await runOnStore(billing, store, 'chat-5');

    expect(outcome).toMatchObject({ type: 'end_conversation', reason: 'refund confirmed, user said bye' });
    expect(model.requests[0]?.toolNames).toContain('end_conversation');
    const stored = await store.readMessages('chat-5', 'main');
    expect(stored.at(-1)).toMatchObject({
      role: 'tool',
      toolName: 'end_conversation',
      content: 'The conversation is closed.',
      isError: false,
    });

    // What the runtime does next with that outcome: close the session and tell the providers.
    const memory = new EpisodicMemory();
    await closeSession(store, 'chat-5', outcome.type === 'end_conversation' ? outcome.reason : '', [memory]);
    expect(await store.getEpisode('chat-5')).toMatchObject({
      closedReason: 'refund confirmed, user said bye',
      agents: ['billing'],
    });
  });

  it('answers a call without a reason with an error result the model sees, and the conversation goes on', async () => {
    const store = new InMemoryStore();
    await store.createSession({ id: 'chat-6' });
    await appendConversation(store, 'chat-6', [{ role: 'user', content: 'bye' }]);
    const model = new ScriptedModel([{ toolCalls: [{ name: 'end_conversation', arguments: {} }] }, { text: 'Bye!' }]);
    const triage = new AgentExecutor(
      agent({ name: 'triage', description: 'Triage.', instructions: 'Route.', model, tools: [endConversationTool] }),
    );
    const { outcome } = await runOnStore(triage, store, 'chat-6');
    expect(outcome.type).toBe('reply');
    const result = (await store.readMessages('chat-6', 'main')).find((m) => m.role === 'tool');
    expect(result).toMatchObject({ isError: true });
    expect(result?.content).toContain('invalid arguments for end_conversation: reason');
  });
});
