import { agent, InMemoryStore } from '@baton/core';
import { OpenAIChatModel } from '@baton/core/openai';
import { HandoffBuilder } from '@baton/handoff';
import { SemanticMemory, WorkingMemory } from '@baton/memory';

const model = new OpenAIChatModel({ model: 'gpt-4.1-mini' });
const triage = agent({ name: 'triage', description: 'Greets and routes.', instructions: 'Route billing questions to billing.', model });
const billing = agent({ name: 'billing', description: 'Charges and refunds.', instructions: 'Resolve billing issues; cite the knowledge base.', model });

const working = new WorkingMemory({ maxTokens: 8000, model: 'gpt-4.1-mini' });
const knowledge = new SemanticMemory({
  agents: ['billing'], // only billing consults it; a document's own `agents` narrows further
  documents: [
    { id: 'refunds', title: 'Refunds', text: 'A duplicate charge is refunded to the card within 3-5 business days.' },
    { id: 'invoices', title: 'Invoices', text: 'Invoices are emailed as PDF on the first day of each month.' },
    { id: 'refunds', tenantId: 'acme', title: 'Acme refunds', text: 'Acme refunds a duplicate charge the same day.' },
  ],
  k: 2,
  maxTokens: 1000, // of the context message, counted as working memory counts
  counter: working.counter,
  // or: embedder: new OpenAIEmbedder() for hybrid search (lexical and embedding rankings fused)
});

const desk = new HandoffBuilder({ name: 'support-desk' })
  .participants(triage, billing)
  .coordinator(triage)
  .store(new InMemoryStore())
  .memory(knowledge)
  .contextProviders(working)
  .build();

const session = await desk.session({ id: 'chat-7', tenantId: 'acme' });
const { message } = await session.send('I was charged twice for order 1234'); // billing sees both refund documents
console.log(message?.content);

knowledge.eraseTenant('acme'); // acme's documents are gone from every later turn; shared ones stay
