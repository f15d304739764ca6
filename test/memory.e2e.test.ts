import { agent, InMemoryStore, type ModelRequest } from '@baton/core';
import { type ScriptedResponse, ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { EpisodicMemory, endConversationTool, WorkingMemory } from '@baton/memory';
import { describe, expect, it } from 'vitest';

const lastUserText = (request: ModelRequest) => request.messages.findLast((m) => m.role === 'user')?.content ?? '';
const drain = async (events: AsyncIterable<unknown>) => {
  for await (const _ of events) {
    // events are not needed here
  }
};

/** A support desk on the real handoff runtime: triage routes charge questions to billing; both run on scripted models. */
function supportDesk(store: InMemoryStore, providers: { memory: EpisodicMemory; working?: WorkingMemory }) {
  const triageModel = new ScriptedModel((request): ScriptedResponse => {
    const text = lastUserText(request);
    if (request.messages.at(-1)?.role === 'user' && /charged twice/.test(text))
      return { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'double charge' } }] };
    if (/bye/.test(text))
      return {
        text: 'Goodbye!',
        toolCalls: [{ name: 'end_conversation', arguments: { reason: 'user said goodbye' } }],
      };
    return { text: `Let me check that for you (${text.length} chars).` };
  });
  const billingModel = new ScriptedModel(() => ({
    text: 'I see two charges of $49.90 on order 1234 and refunded the duplicate one.',
  }));
  const triage = agent({
    name: 'triage',
    description: 'Greets and routes.',
    instructions: 'Route billing questions to billing.',
    model: triageModel,
    tools: [endConversationTool],
  });
  const billing = agent({
    name: 'billing',
    description: 'Charges and refunds.',
    instructions: 'Resolve billing issues.',
    model: billingModel,
  });
  let builder = new HandoffBuilder({ name: 'support-desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .memory(providers.memory);
  if (providers.working !== undefined) builder = builder.contextProviders(providers.working);
  return { desk: builder.build(), triageModel, billingModel };
}

describe('memory on the handoff runtime', () => {
  it('a closed double-charge session is recalled when the same user later asks about the refund, never for another user', async () => {
    const store = new InMemoryStore();
    const { desk, triageModel } = supportDesk(store, { memory: new EpisodicMemory() });

    const first = await desk.session({ id: 'chat-81', userId: 'u-42' });
    await drain(first.send('I was charged twice for order 1234'));
    await first.close({ reason: 'resolved' });
    expect(await store.getEpisode('chat-81')).toMatchObject({
      closedReason: 'resolved',
      agents: ['triage', 'billing'],
      userId: 'u-42',
    });

    const later = await desk.session({ id: 'chat-90', userId: 'u-42' });
    await drain(later.send('what happened with my refund?'));
    const context = triageModel.requests.at(-1)?.messages.filter((m) => m.role === 'context') ?? [];
    expect(context).toHaveLength(1);
    expect(context[0]?.content).toContain('Conversation chat-81');
    expect(context[0]?.content).toContain('charged twice for order 1234');

    const stranger = await desk.session({ id: 'chat-91', userId: 'u-7' });
    await drain(stranger.send('what happened with my refund?'));
    expect(triageModel.requests.at(-1)?.messages.filter((m) => m.role === 'context')).toEqual([]);
  });

  it("an agent's end_conversation closes the session and saves its episode", async () => {
    const store = new InMemoryStore();
    const { desk } = supportDesk(store, { memory: new EpisodicMemory() });
    const session = await desk.session({ id: 'chat-95', userId: 'u-42' });
    await drain(session.send('All good now, bye'));
    expect((await store.getSession('chat-95'))?.status).toBe('closed');
    expect(await store.getEpisode('chat-95')).toMatchObject({ closedReason: 'user said goodbye', agents: ['triage'] });
  });

  it('working memory keeps every model input of a long session within its budget', async () => {
    const store = new InMemoryStore();
    const working = new WorkingMemory({ maxTokens: 600, pinFirstUserMessage: true });
    const { desk, triageModel, billingModel } = supportDesk(store, { memory: new EpisodicMemory(), working });
    const session = await desk.session({ id: 'chat-long', userId: 'u-42' });
    await drain(session.send('I was charged twice for order 1234'));
    for (let i = 0; i < 30; i++)
      await drain(session.send(`Question ${i}: could you check the status of my order number ${2000 + i} please?`));
    const requests = [...triageModel.requests, ...billingModel.requests];
    for (const request of requests) expect(working.countTokens(request.messages)).toBeLessThanOrEqual(600);
    const lastInput = triageModel.requests.at(-1)!.messages;
    expect(lastInput.find((m) => m.role === 'user')?.content).toBe('I was charged twice for order 1234'); // pinned
    expect(lastInput.at(-1)?.content).toContain('Question 29');
    expect((await store.readMessages('chat-long', 'main')).length).toBeGreaterThan(60); // nothing was lost from storage
  });
});
