import { agent, InMemoryStore } from '@baton/core';
import { OpenAIChatModel, OpenAIEmbedder } from '@baton/core/openai';
import { HandoffBuilder } from '@baton/handoff';
import { EpisodicMemory, WorkingMemory, endConversationTool, listToolCalls } from '@baton/memory';

const model = new OpenAIChatModel({ model: 'gpt-4.1-mini' });
const triage = agent({ name: 'triage', description: 'Greets and routes.', instructions: 'Route billing questions to billing.', model, tools: [endConversationTool] });
const billing = agent({ name: 'billing', description: 'Charges and refunds.', instructions: 'Resolve billing issues.', model });

const episodic = new EpisodicMemory({ recall: { k: 3 } }); // lexical recall, offline
// or: new EpisodicMemory({ embedder: new OpenAIEmbedder(), summarizer: model }) for hybrid recall and model summaries

const store = new InMemoryStore(); // or FileStore, MongoStore
const desk = new HandoffBuilder({ name: 'support-desk' })
  .participants(triage, billing)
  .coordinator(triage)
  .store(store)
  .memory(episodic)
  .contextProviders(new WorkingMemory({ maxTokens: 8000, model: 'gpt-4.1-mini', pinFirstUserMessage: true }))
  .build();

const first = await desk.session({ id: 'chat-81', userId: 'u-42' });
for await (const event of first.send('I was charged twice for order 1234')) console.log(event.type);
await first.close({ reason: 'resolved' }); // the episode is written here

const later = await desk.session({ id: 'chat-90', userId: 'u-42' });
for await (const event of later.send('What happened with my refund?')) console.log(event.type); // chat-81 is recalled

// Close sessions idle for 30 minutes, from any scheduler (or episodic.startIdleSweep({ every, idleFor, store })):
await episodic.closeIdleSessions({ store, idleFor: 30 * 60_000 });

for (const call of await listToolCalls(store, 'chat-81')) console.log(call.name, call.succeeded, call.durationMs);
