import {
  type BeforeActivationArgs,
  ConfigurationError,
  InMemoryStore,
  InvalidInputError,
  type Session,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { KNOWLEDGE_HEADING, type KnowledgeDocument, SemanticMemory, TokenCounter } from '../src/index.js';
import { ConceptEmbedder } from './support/conceptEmbedder.js';

const refunds: KnowledgeDocument = {
  id: 'refunds',
  agents: ['billing'],
  title: 'Refunds',
  text: 'A duplicate charge is refunded to the card within 3-5 business days.',
};
const invoices: KnowledgeDocument = {
  id: 'invoices',
  agents: ['billing'],
  title: 'Invoices',
  text: 'Invoices are emailed as PDF on the first day of each month.',
};
const parcels: KnowledgeDocument = {
  id: 'late-parcels',
  agents: ['shipping'],
  title: 'Late parcels',
  text: 'A parcel late by more than 5 days is traced with the courier; the order is charged once.',
};
const hours: KnowledgeDocument = {
  id: 'hours',
  title: 'Opening hours',
  text: 'The desk answers chats from 8:00 to 20:00 CET, Monday to Saturday.',
};

const ids = (hits: { document: KnowledgeDocument }[]) => hits.map((h) => h.document.id);

function activation(agent: string, input: string, tenantId?: string): BeforeActivationArgs {
  const session: Session = {
    id: 'chat-1',
    status: 'active',
    createdAt: '',
    lastActivityAt: '',
    metadata: {},
    state: {},
    version: 1,
  };
  if (tenantId !== undefined) session.tenantId = tenantId;
  return { session, branchId: 'main', input, store: new InMemoryStore(), signal: new AbortController().signal, agent };
}

describe('SemanticMemory search', () => {
  it('ranks lexically by default and keeps each agent to its own documents and the shared ones', async () => {
    const kb = new SemanticMemory({ documents: [refunds, invoices, parcels, hours] });
    const query = 'I was charged twice, when do I get it back? Also my parcel is late.';
    expect(ids(await kb.search({ query, agent: 'billing' }))).toEqual(['refunds']);
    expect(ids(await kb.search({ query, agent: 'shipping' }))).toEqual(['late-parcels']);
    expect(ids(await kb.search({ query, agent: 'triage' }))).toEqual([]);
    expect(ids(await kb.search({ query: 'when are you open on saturday?', agent: 'triage' }))).toEqual(['hours']);
    expect(ids(await kb.search({ query }))).toEqual(expect.arrayContaining(['refunds', 'late-parcels']));
  });

  it("shows a tenant's documents only to that tenant, shared ones to every tenant", async () => {
    const kb = new SemanticMemory({
      documents: [
        hours,
        {
          id: 'hours',
          tenantId: 'acme',
          title: 'Acme hours',
          text: 'Acme chats open around the clock, Monday to Sunday.',
        },
      ],
    });
    expect(kb.size).toBe(2);
    expect(ids(await kb.search({ query: 'open on sunday?', tenantId: 'acme' }))).toEqual(['hours', 'hours']);
    const [best] = await kb.search({ query: 'open around the clock?', tenantId: 'acme' });
    expect(best?.document.tenantId).toBe('acme');
    const globex = await kb.search({ query: 'open around the clock on sunday?', tenantId: 'globex' });
    expect(globex.map((h) => h.document.title)).toEqual(['Opening hours']);
    expect((await kb.search({ query: 'open around the clock on sunday?' })).map((h) => h.document.title)).toEqual([
      'Opening hours',
    ]);
  });

  it('finds a document by meaning in embedding mode where lexical search finds nothing', async () => {
    const kb = new SemanticMemory({
      documents: [refunds, parcels],
      embedder: new ConceptEmbedder(),
      search: 'embedding',
    });
    const query = 'I want my money reimbursed';
    expect(await kb.search({ query, mode: 'lexical' })).toEqual([]);
    const found = await kb.search({ query });
    expect(ids(found)).toEqual(['refunds']);
    expect(found[0]?.similarity).toBeGreaterThan(0.3);
  });

  it('fuses the lexical and the embedding ranking in hybrid mode (the default with an embedder)', async () => {
    const tracking: KnowledgeDocument = {
      id: 'tracking',
      title: 'Tracking numbers',
      text: 'Every order gets a tracking number by email when it leaves the warehouse.',
    };
    const kb = new SemanticMemory({ documents: [refunds, parcels, tracking], embedder: new ConceptEmbedder() });
    expect(kb.defaultMode).toBe('hybrid');
    const query = 'refund for my order';
    const lexical = ids(await kb.search({ query, mode: 'lexical' }));
    const semantic = ids(await kb.search({ query, mode: 'embedding' }));
    expect(lexical).toContain('tracking'); // "order", no meaning in common
    expect(semantic).not.toContain('tracking');
    const hybrid = await kb.search({ query, k: 3 });
    expect(hybrid[0]?.document.id).toBe('refunds'); // first in both rankings
    expect(hybrid[0]?.score).toBeCloseTo(2 / 61);
    expect(hybrid[0]).toMatchObject({ lexicalScore: expect.any(Number), similarity: expect.any(Number) });
    expect(ids(hybrid).sort()).toEqual([...new Set([...lexical, ...semantic])].sort());
  });

  it('embeds each document once, at its first search, and again only when it is replaced', async () => {
    const embedder = new ConceptEmbedder();
    const kb = new SemanticMemory({ documents: [refunds, parcels], embedder, search: 'embedding' });
    expect(embedder.texts).toBe(0);
    await kb.search({ query: 'money back' });
    expect(embedder.texts).toBe(3); // 2 documents + the query
    await kb.search({ query: 'money back' });
    expect(embedder.texts).toBe(3); // the query's vector is kept too
    kb.add({ ...parcels, text: 'Parcels are shipped by courier.' });
    await kb.search({ query: 'where is my package' });
    expect(embedder.texts).toBe(5); // the replaced document + the new query
  });
});

describe('SemanticMemory as a context provider', () => {
  it('gives the agent about to act one context message with its best documents, none to others', async () => {
    const kb = new SemanticMemory({ documents: [refunds, invoices, parcels], agents: ['billing'] });
    const [message, ...rest] =
      (await kb.beforeActivation(activation('billing', 'I was charged twice for order 1234'))) ?? [];
    expect(rest).toEqual([]);
    expect(message?.role).toBe('context');
    expect(message?.content).toBe(`${KNOWLEDGE_HEADING}\n\n[1] Refunds (refunds)\n${refunds.text}`);
    expect(await kb.beforeActivation(activation('shipping', 'my parcel is late and I was charged'))).toBeUndefined();
    expect(await kb.beforeActivation(activation('billing', '   '))).toBeUndefined();
    expect(await kb.search({ query: 'my parcel is late and I was charged', agent: 'shipping' })).toEqual([]);
  });

  it('keeps the context message within maxTokens, cutting the document that does not fit', async () => {
    const counter = new TokenCounter({ model: 'gpt-4.1-mini' });
    const long: KnowledgeDocument = {
      id: 'refund-terms',
      title: 'Refund terms',
      text: 'A refund for a duplicate charge is issued once the charge settles. '.repeat(200),
    };
    const kb = new SemanticMemory({ documents: [refunds, long], maxTokens: 120, counter });
    const [message] = (await kb.beforeActivation(activation('billing', 'refund for a duplicate charge'))) ?? [];
    expect(counter.countText(message!.content)).toBeLessThanOrEqual(120);
    expect(counter.countText(message!.content)).toBeGreaterThan(100);
    expect(message?.content).toContain('Refund terms (refund-terms)\nA refund for a duplicate charge');
    expect(message?.content).not.toContain(long.text);
  });

  it('erases: a removed document, a tenant and everything are gone from later activations', async () => {
    const acme: KnowledgeDocument = {
      id: 'refunds',
      tenantId: 'acme',
      title: 'Acme refunds',
      text: 'Acme refunds a duplicate charge the same day.',
    };
    const kb = new SemanticMemory({ documents: [refunds, acme, hours] });
    const context = async (tenantId?: string) =>
      (await kb.beforeActivation(activation('billing', 'refund of a duplicate charge', tenantId)))?.[0]?.content ?? '';
    expect(await context('acme')).toContain('Acme refunds');
    expect(kb.eraseTenant('acme')).toBe(1);
    expect(await context('acme')).not.toContain('Acme refunds');
    expect(await context('acme')).toContain('[1] Refunds (refunds)');
    expect(kb.remove('refunds')).toBe(true);
    expect(kb.remove('refunds')).toBe(false);
    expect(await context('acme')).toBe('');
    kb.clear();
    expect(kb.size).toBe(0);
    expect(kb.get('hours')).toBeUndefined();
  });

  it('falls back to lexical search when the embedder fails before an activation, and reports it', async () => {
    const embedder = new ConceptEmbedder();
    const errors: string[] = [];
    const kb = new SemanticMemory({
      documents: [refunds],
      embedder,
      onError: (e) => errors.push((e as Error).message),
    });
    embedder.failNext = 1;
    const [message] = (await kb.beforeActivation(activation('billing', 'duplicate charge'))) ?? [];
    expect(message?.content).toContain('Refunds');
    expect(errors).toEqual(['embedding service unavailable']);
    embedder.failNext = 1;
    await expect(kb.search({ query: 'duplicate charge' })).rejects.toThrow('embedding service unavailable');
  });
});

describe('SemanticMemory input checks', () => {
  it('refuses a malformed document with an InvalidInputError naming it and the field, adding none of the batch', () => {
    const kb = new SemanticMemory();
    const bad = { id: 'empty', title: 'Empty', text: ' ' };
    expect(() => kb.add([hours, bad])).toThrow(InvalidInputError);
    expect(() => kb.add([hours, bad])).toThrow(/"empty".*text: must not be empty/);
    expect(() => kb.add({ title: 'x', text: 'y' } as unknown as KnowledgeDocument)).toThrow(/without an id.*id:/);
    expect(kb.size).toBe(0);
  });

  it('refuses settings it cannot honour with a ConfigurationError', () => {
    expect(() => new SemanticMemory({ search: 'hybrid' })).toThrow(ConfigurationError);
    expect(() => new SemanticMemory({ k: 0 })).toThrow(/k must be a positive integer, got 0/);
    expect(() => new SemanticMemory({ maxTokens: 1.5 })).toThrow(ConfigurationError);
  });

  it('refuses a bad query', async () => {
    const kb = new SemanticMemory({ documents: [hours] });
    await expect(kb.search({ query: 'open?', k: -1 })).rejects.toThrow(InvalidInputError);
    await expect(kb.search({ query: 'open?', mode: 'embedding' })).rejects.toThrow(ConfigurationError);
    expect(() => kb.eraseTenant('')).toThrow(InvalidInputError);
  });
});
