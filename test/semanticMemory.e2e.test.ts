/**
 * Semantic memory on the real handoff runtime: each agent's knowledge reaches that agent's model
 * inputs (as ScriptedModel recorded them) and nothing else — not another agent's, not another
 * tenant's, not after erasure, and never the store (messages, checkpoints, the FileStore's files).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, FileStore, InMemoryStore, type ModelRequest, type Store } from '@baton/core';
import { OpenAIEmbedder } from '@baton/core/openai';
import { ScriptedModel, type ScriptedResponse } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { KNOWLEDGE_HEADING, type KnowledgeDocument, SemanticMemory, WorkingMemory } from '@baton/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddingsServer } from '../packages/core/test/support/embeddingsServer.js';

const refunds: KnowledgeDocument = {
  id: 'refunds',
  title: 'Refunds',
  text: 'A duplicate charge is refunded to the card within 3-5 business days (policy R-17).',
};
const invoices: KnowledgeDocument = {
  id: 'invoices',
  title: 'Invoices',
  text: 'Invoices are emailed as PDF on the first day of each month (policy I-02).',
};
const parcels: KnowledgeDocument = {
  id: 'late-parcels',
  title: 'Late parcels',
  text: 'A parcel late by more than 5 days is traced with the courier (policy S-09).',
};

const lastUserText = (request: Pick<ModelRequest, 'messages'>) =>
  request.messages.findLast((m) => m.role === 'user')?.content ?? '';
const contextOf = (request: Pick<ModelRequest, 'messages'> | undefined) =>
  (request?.messages ?? [])
    .filter((m) => m.role === 'context')
    .map((m) => m.content)
    .join('\n');

/** Triage routes charges to billing and parcels to shipping; every agent runs on a scripted model. */
function desk(store: Store, ...memories: (SemanticMemory | WorkingMemory)[]) {
  const triageModel = new ScriptedModel((request): ScriptedResponse => {
    const text = lastUserText(request);
    if (request.messages.at(-1)?.role !== 'user') return { text: 'Anything else?' };
    if (/charge/.test(text)) return { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'charge' } }] };
    if (/parcel/.test(text)) return { toolCalls: [{ name: 'handoff_to_shipping', arguments: { reason: 'parcel' } }] };
    return { text: 'How can I help?' };
  });
  const billingModel = new ScriptedModel(() => ({
    text: 'The duplicate charge will be refunded within 3-5 business days.',
  }));
  const shippingModel = new ScriptedModel(() => ({ text: 'I asked the courier to trace your parcel.' }));
  const triage = agent({
    name: 'triage',
    description: 'Routes.',
    instructions: 'Route charges to billing, parcels to shipping.',
    model: triageModel,
  });
  const billing = agent({
    name: 'billing',
    description: 'Charges and refunds.',
    instructions: 'Resolve billing issues.',
    model: billingModel,
  });
  const shipping = agent({
    name: 'shipping',
    description: 'Parcels.',
    instructions: 'Resolve shipping issues.',
    model: shippingModel,
  });
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing, shipping)
    .coordinator(triage)
    .store(store)
    .contextProviders(...memories)
    .build();
  return { workflow, triageModel, billingModel, shippingModel };
}

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return Promise.all(entries.filter((e) => e.isFile()).map((e) => readFile(join(e.parentPath, e.name), 'utf8')));
}

describe('semantic memory on the handoff runtime', () => {
  it('gives billing the billing knowledge and shipping the shipping knowledge, and stores none of it', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-knowledge-'));
    directories.push(directory);
    const store = new FileStore({ directory });
    const billingKb = new SemanticMemory({ agents: ['billing'], documents: [refunds, invoices] });
    const shippingKb = new SemanticMemory({ agents: ['shipping'], documents: [parcels] });
    const { workflow, triageModel, billingModel, shippingModel } = desk(store, billingKb, shippingKb);
    const session = await workflow.session({ id: 'chat-1' });

    // The message is about a charge and a parcel: only agent scoping keeps the parcel policy from billing.
    await session.send('I was charged twice for order 1234, and my parcel is late');
    const billingInput = billingModel.requests[0]!.messages;
    expect(contextOf(billingModel.requests[0])).toBe(`${KNOWLEDGE_HEADING}\n\n[1] Refunds (refunds)\n${refunds.text}`);
    expect(billingInput.findIndex((m) => m.role === 'context')).toBe(
      billingInput.findLastIndex((m) => m.role === 'user') - 1,
    );
    expect(contextOf(triageModel.requests[0])).toBe('');

    await session.send('Where is my parcel?');
    expect(contextOf(shippingModel.requests[0])).toContain(parcels.text);
    expect(contextOf(shippingModel.requests[0])).not.toContain('R-17');

    const messages = await store.readMessages('chat-1', 'main');
    expect(messages.map((m) => m.role)).not.toContain('context');
    for (const marker of ['R-17', 'I-02', 'S-09', KNOWLEDGE_HEADING]) {
      expect(JSON.stringify(messages)).not.toContain(marker);
      for (const entry of await store.listCheckpoints('chat-1', 'main')) {
        expect(JSON.stringify(await store.loadCheckpoint('chat-1', 'main', entry.id))).not.toContain(marker);
      }
      for (const file of await filesUnder(directory)) expect(file).not.toContain(marker);
    }
  });

  it("never shows one tenant's documents to another tenant, and forgets erased ones in later turns", async () => {
    const store = new InMemoryStore();
    const acmeRefunds: KnowledgeDocument = {
      id: 'refunds',
      tenantId: 'acme',
      title: 'Acme refunds',
      text: 'Acme refunds a duplicate charge the same day (policy ACME-1).',
    };
    const kb = new SemanticMemory({ agents: ['billing'], documents: [refunds, acmeRefunds] });
    const { workflow, billingModel } = desk(store, kb);

    const acme = await workflow.session({ id: 'chat-acme', tenantId: 'acme' });
    await acme.send('I was charged twice, when is the duplicate charge refunded?');
    expect(contextOf(billingModel.requests.at(-1))).toContain('ACME-1');
    expect(contextOf(billingModel.requests.at(-1))).toContain('R-17');

    const globex = await workflow.session({ id: 'chat-globex', tenantId: 'globex' });
    await globex.send('I was charged twice, when is the duplicate charge refunded?');
    expect(contextOf(billingModel.requests.at(-1))).not.toContain('ACME-1');
    expect(contextOf(billingModel.requests.at(-1))).toContain('R-17');

    expect(kb.eraseTenant('acme')).toBe(1);
    await acme.send('Another duplicate charge appeared, refund it too please');
    expect(contextOf(billingModel.requests.at(-1))).not.toContain('ACME-1');
    expect(kb.remove('refunds')).toBe(true);
    await acme.send('And one more duplicate charge, refund it');
    expect(contextOf(billingModel.requests.at(-1))).toBe('');
  });

  it("stays within working memory's token budget: the knowledge is kept and older history is dropped", async () => {
    const working = new WorkingMemory({ maxTokens: 400, model: 'gpt-4.1-mini' });
    const kb = new SemanticMemory({
      agents: ['billing'],
      documents: [refunds, invoices],
      maxTokens: 120,
      counter: working.counter,
    });
    const { workflow, billingModel } = desk(new InMemoryStore(), kb, working);
    const session = await workflow.session({ id: 'chat-long' });
    for (let i = 0; i < 12; i++)
      await session.send(
        `Charge number ${i}: I was charged twice for order ${1000 + i}, please refund the duplicate charge.`,
      );
    for (const request of billingModel.requests) {
      expect(working.countTokens(request.messages)).toBeLessThanOrEqual(400);
      expect(contextOf(request)).toContain('R-17');
    }
    const last = billingModel.requests.at(-1)!.messages;
    expect(last.some((m) => m.content.includes('Charge number 0:'))).toBe(false); // dropped to make room
    expect(lastUserText(billingModel.requests.at(-1)!)).toContain('Charge number 11:');
  });

  it('ranks hybrid with OpenAI embeddings over HTTP, embedding each document once and each message once', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder({ baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 0 });
    const kb = new SemanticMemory({ documents: [refunds, invoices, parcels], embedder, k: 2 });
    expect(kb.defaultMode).toBe('hybrid');
    const { workflow, triageModel, billingModel } = desk(new InMemoryStore(), kb);
    const session = await workflow.session({ id: 'chat-hybrid' });

    await session.send('Is a duplicate charge refunded to the card?');
    expect(contextOf(triageModel.requests[0])).toMatch(/^[^\n]+\n\n\[1\] Refunds \(refunds\)/);
    expect(contextOf(billingModel.requests[0])).toMatch(/^[^\n]+\n\n\[1\] Refunds \(refunds\)/);
    // The documents, then the message once for both activations (triage's and billing's).
    expect(server.requests.map((r) => r.body.input.length)).toEqual([3, 1]);

    await session.send('When are invoices emailed, is there a charge?');
    expect(contextOf(billingModel.requests.at(-1))).toMatch(/\[1\] Invoices \(invoices\)/);
    expect(server.requests.map((r) => r.body.input.length)).toEqual([3, 1, 1]);
  });
});
