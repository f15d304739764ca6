import { type BeforeTurnArgs, InMemoryStore, type NewMessage, type Store } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { EpisodicMemory } from '../src/index.js';
import { ConceptEmbedder } from './support/conceptEmbedder.js';
import { appendConversation, closeSession } from './support/conversation.js';

const conversations: Record<string, NewMessage[]> = {
  'chat-charge': [
    { role: 'user', content: 'I was billed twice for my order.' },
    { role: 'assistant', agent: 'billing', content: 'I see the duplicate charge and refunded it.' },
  ],
  'chat-parcel': [
    { role: 'user', content: 'My parcel never arrived.' },
    { role: 'assistant', agent: 'shipping', content: 'The courier lost it; a new package is on its way.' },
  ],
  'chat-login': [
    { role: 'user', content: 'My account is locked after too many password attempts.' },
    { role: 'assistant', agent: 'account', content: 'I unlocked your account; please reset your password.' },
  ],
};

async function seed(memory: EpisodicMemory): Promise<Store> {
  const store = new InMemoryStore();
  for (const [id, messages] of Object.entries(conversations)) {
    await store.createSession({ id, userId: 'u-1' });
    await appendConversation(store, id, messages);
    await closeSession(store, id, 'resolved', [memory]);
  }
  return store;
}

describe('recall with an embedder', () => {
  it('stores an embedding on each episode with the model that made it', async () => {
    const embedder = new ConceptEmbedder();
    const store = await seed(new EpisodicMemory({ embedder }));
    const episode = await store.getEpisode('chat-charge');
    expect(episode?.embedding).toHaveLength(5);
    expect(episode?.metadata?.embeddingModel).toBe('concept-embedder-v1');
  });

  it('finds an episode by meaning in embedding mode where lexical recall finds nothing', async () => {
    const embedder = new ConceptEmbedder();
    const memory = new EpisodicMemory({ embedder, recall: { mode: 'embedding' } });
    const store = await seed(memory);
    const query = { store, userId: 'u-1', query: 'Was I reimbursed for paying double?' };

    expect(await memory.recall({ ...query, mode: 'lexical' })).toEqual([]);
    const [best] = await memory.recall(query);
    expect(best?.episode.id).toBe('chat-charge');
    expect(best?.similarity).toBeGreaterThan(0.3);
    expect(best?.lexicalScore).toBeUndefined();
  });

  it('fuses lexical and embedding rankings in hybrid mode (the default with an embedder)', async () => {
    const embedder = new ConceptEmbedder();
    const memory = new EpisodicMemory({ embedder });
    const store = await seed(memory);
    const results = await memory.recall({ store, userId: 'u-1', query: 'the courier and my parcel' });
    expect(results[0]?.episode.id).toBe('chat-parcel');
    expect(results[0]?.lexicalScore).toBeGreaterThan(0);
    expect(results[0]?.similarity).toBeGreaterThan(0.3);
    // Reciprocal-rank fusion: first in both rankings gives 2/(60+1).
    expect(results[0]?.score).toBeCloseTo(2 / 61, 10);
  });

  it('embeds episodes saved without an embedding once, at their first recall', async () => {
    const store = await seed(new EpisodicMemory());
    expect((await store.getEpisode('chat-login'))?.embedding).toBeUndefined();
    const embedder = new ConceptEmbedder();
    const memory = new EpisodicMemory({ embedder, recall: { mode: 'embedding' } });
    expect((await memory.recall({ store, userId: 'u-1', query: 'I cannot login' }))[0]?.episode.id).toBe('chat-login');
    expect(embedder.texts).toBe(4); // 3 episodes + the query
    await memory.recall({ store, userId: 'u-1', query: 'password trouble' });
    expect(embedder.texts).toBe(5); // only the new query
  });

  it('leaves out embedding matches below minSimilarity', async () => {
    const embedder = new ConceptEmbedder();
    const memory = new EpisodicMemory({ embedder, recall: { mode: 'embedding', minSimilarity: 0.9 } });
    const store = await seed(memory);
    expect(await memory.recall({ store, userId: 'u-1', query: 'refund for the parcel and my password' })).toEqual([]);
  });

  it('falls back to lexical recall in beforeTurn when the embedder fails, and reports it', async () => {
    const embedder = new ConceptEmbedder();
    const errors: string[] = [];
    const memory = new EpisodicMemory({
      embedder,
      onError: (e, stage) => errors.push(`${stage}: ${(e as Error).message}`),
    });
    const store = await seed(memory);
    const session = await store.createSession({ id: 'chat-new', userId: 'u-1' });
    embedder.failNext = 1;
    const args: BeforeTurnArgs = {
      session,
      branchId: 'main',
      input: 'my parcel again',
      store,
      signal: new AbortController().signal,
    };
    const context = await memory.beforeTurn(args);
    expect(errors).toEqual(['recall: embedding service unavailable']);
    expect(context?.[0]?.content).toContain('Conversation chat-parcel');
  });

  it('propagates embedder errors from an explicit recall', async () => {
    const embedder = new ConceptEmbedder();
    const memory = new EpisodicMemory({ embedder });
    const store = await seed(memory);
    embedder.failNext = 1;
    await expect(memory.recall({ store, userId: 'u-1', query: 'parcel' })).rejects.toThrow(
      'embedding service unavailable',
    );
  });
});
