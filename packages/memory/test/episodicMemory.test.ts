import {
  type BeforeTurnArgs,
  ConfigurationError,
  InMemoryStore,
  InvalidInputError,
  type NewMessage,
  type Session,
  type Store,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { EpisodicMemory, RECALLED_EPISODES_HEADING } from '../src/index.js';
import { appendConversation, closeSession } from './support/conversation.js';

const doubleCharge: NewMessage[] = [
  { role: 'user', content: 'Hi, I was charged twice for order 1234 last week.' },
  {
    role: 'assistant',
    agent: 'triage',
    content: '',
    toolCalls: [{ id: 'h1', name: 'handoff_to_billing', arguments: '{}' }],
  },
  {
    role: 'tool',
    agent: 'triage',
    content: 'Transferred to billing.',
    toolCallId: 'h1',
    toolName: 'handoff_to_billing',
    isError: false,
    durationMs: 1,
  },
  {
    role: 'assistant',
    agent: 'billing',
    content: 'I see two identical charges of $49.90 on order 1234. Can you confirm your account id?',
  },
  { role: 'user', content: 'Sure, it is AC-99812.' },
  {
    role: 'assistant',
    agent: 'billing',
    content: 'Thanks. I issued a refund of $49.90 for the duplicate charge; it reaches your card in 3-5 business days.',
  },
  { role: 'user', content: 'Great, thank you!' },
];

const lateParcel: NewMessage[] = [
  { role: 'user', content: 'My parcel with the new headphones has not arrived yet.' },
  { role: 'assistant', agent: 'shipping', content: 'The courier shows it in transit; it should arrive on Friday.' },
];

async function closedSession(
  store: Store,
  id: string,
  who: { userId: string; tenantId?: string },
  messages: NewMessage[],
  memory: EpisodicMemory,
): Promise<Session> {
  await store.createSession({ id, ...who });
  const scope = who.tenantId === undefined ? {} : { tenantId: who.tenantId };
  await appendConversation(store, id, messages, scope);
  return closeSession(store, id, 'resolved', [memory], scope);
}

async function turnContext(
  memory: EpisodicMemory,
  store: Store,
  session: Session,
  input: string,
): Promise<string | undefined> {
  const args: BeforeTurnArgs = { session, branchId: 'main', input, store, signal: new AbortController().signal };
  const messages = await memory.beforeTurn(args);
  if (messages === undefined) return undefined;
  expect(messages).toHaveLength(1);
  expect(messages[0]?.role).toBe('context');
  return messages[0]?.content;
}

describe('EpisodicMemory', () => {
  it('recalls the double-charge episode when the same user later asks "what happened with my refund?"', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory();
    await closedSession(store, 'chat-81', { userId: 'u-42' }, doubleCharge, memory);
    await closedSession(store, 'chat-82', { userId: 'u-42' }, lateParcel, memory);

    const next = await store.createSession({ id: 'chat-90', userId: 'u-42' });
    const context = await turnContext(memory, store, next, 'what happened with my refund?');

    expect(context).toBeDefined();
    expect(context!.startsWith(RECALLED_EPISODES_HEADING)).toBe(true);
    expect(context).toContain('Conversation chat-81');
    expect(context).toContain('closed: resolved; agents: triage, billing');
    expect(context).toContain('charged twice for order 1234');
    expect(context).not.toContain('chat-82');
  });

  it("never recalls another user's episodes", async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory();
    await closedSession(store, 'chat-81', { userId: 'u-42' }, doubleCharge, memory);
    const other = await store.createSession({ id: 'chat-91', userId: 'u-7' });

    expect(await turnContext(memory, store, other, 'what happened with my refund?')).toBeUndefined();
    expect(await memory.recall({ store, userId: 'u-7', query: 'refund charged twice order 1234' })).toEqual([]);
    expect(
      (await memory.recall({ store, userId: 'u-42', query: 'refund charged twice order 1234' })).map(
        (r) => r.episode.id,
      ),
    ).toEqual(['chat-81']);
  });

  it("never recalls another tenant's episodes, even for the same user id", async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory();
    await closedSession(store, 'acme-chat-1', { tenantId: 'acme', userId: 'u-42' }, doubleCharge, memory);
    const globex = await store.createSession({ id: 'globex-chat-1', tenantId: 'globex', userId: 'u-42' });
    const untenanted = await store.createSession({ id: 'plain-chat-1', userId: 'u-42' });
    const acme = await store.createSession({ id: 'acme-chat-2', tenantId: 'acme', userId: 'u-42' });

    expect(await turnContext(memory, store, globex, 'what happened with my refund?')).toBeUndefined();
    expect(await turnContext(memory, store, untenanted, 'what happened with my refund?')).toBeUndefined();
    expect(await turnContext(memory, store, acme, 'what happened with my refund?')).toContain(
      'Conversation acme-chat-1',
    );
  });

  it('recalls nothing of a customer once the store erased them, or deleted the session', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory();
    const acme = { tenantId: 'acme' };
    await closedSession(store, 'chat-81', { tenantId: 'acme', userId: 'u-42' }, doubleCharge, memory);
    await closedSession(store, 'chat-82', { tenantId: 'acme', userId: 'u-7' }, doubleCharge, memory);
    const query = 'refund charged twice order 1234';
    expect((await memory.recall({ store, ...acme, userId: 'u-42', query })).map((r) => r.episode.id)).toEqual([
      'chat-81',
    ]);

    expect(await store.eraseUser({ ...acme, userId: 'u-42' })).toMatchObject({ sessions: 1, episodes: 1 });
    expect(await memory.recall({ store, ...acme, userId: 'u-42', query })).toEqual([]);
    expect((await memory.recall({ store, ...acme, userId: 'u-7', query })).map((r) => r.episode.id)).toEqual([
      'chat-82',
    ]);
    expect(await store.deleteSession('chat-82', acme)).toBe(true);
    expect(await memory.recall({ store, ...acme, userId: 'u-7', query })).toEqual([]);
  });

  it('injects nothing when no episode matches, and for sessions without a user', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory();
    await closedSession(store, 'chat-81', { userId: 'u-42' }, doubleCharge, memory);
    const next = await store.createSession({ id: 'chat-90', userId: 'u-42' });
    expect(await turnContext(memory, store, next, 'Do you sell garden furniture?')).toBeUndefined();
    expect(await turnContext(memory, store, next, 'ok thanks')).toBeUndefined();
    const anonymous = await store.createSession({ id: 'chat-anon' });
    expect(await turnContext(memory, store, anonymous, 'what happened with my refund?')).toBeUndefined();
  });

  it('saves one episode per session with who, when, why, agents, transcript, summary and keywords', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory();
    const session = await closedSession(store, 'chat-81', { tenantId: 'acme', userId: 'u-42' }, doubleCharge, memory);
    const episode = await store.getEpisode('chat-81', { tenantId: 'acme' });

    expect(episode).toMatchObject({
      id: 'chat-81',
      sessionId: 'chat-81',
      tenantId: 'acme',
      userId: 'u-42',
      startedAt: session.createdAt,
      endedAt: session.closedAt,
      closedReason: 'resolved',
      agents: ['triage', 'billing'],
      metadata: { summarizedBy: 'extractive', messageCount: 7 },
    });
    expect(episode?.transcript.map((l) => l.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(episode?.transcript[1]).toEqual({ role: 'assistant', agent: 'billing', content: doubleCharge[3]!.content });
    expect(episode?.summary.split('\n')[0]).toBe('User: Hi, I was charged twice for order 1234 last week.');
    expect(episode?.keywords.slice(0, 3)).toEqual(['charged', 'order', '1234']);
    expect(episode?.keywords).toHaveLength(12);
    for (const filler of ['the', 'hi', 'thank', 'great']) expect(episode?.keywords).not.toContain(filler);
  });

  it('saves nothing more when the session is closed again, and no episode for a session without text', async () => {
    const store = new InMemoryStore();
    const summarizer = new ScriptedModel(() => ({ text: 'The user was charged twice; billing refunded $49.90.' }));
    const memory = new EpisodicMemory({ summarizer });
    const session = await closedSession(store, 'chat-81', { userId: 'u-42' }, doubleCharge, memory);
    const messages = await store.readMessages('chat-81', 'main');
    await memory.onSessionClose({ session, reason: 'closed again', messages, agents: [], store });

    expect(summarizer.requests).toHaveLength(1);
    const episode = await store.getEpisode('chat-81');
    expect(episode?.closedReason).toBe('resolved');
    expect(episode?.summary).toBe('The user was charged twice; billing refunded $49.90.');
    expect(episode?.metadata?.summarizedBy).toBe('scripted');

    await store.createSession({ id: 'chat-empty', userId: 'u-42' });
    await closeSession(store, 'chat-empty', 'idle', [memory]);
    expect(await store.getEpisode('chat-empty')).toBeUndefined();
  });

  it('falls back to the extractive summary when the summariser fails, and reports it', async () => {
    const store = new InMemoryStore();
    const errors: string[] = [];
    const memory = new EpisodicMemory({
      summarizer: new ScriptedModel([{ error: new Error('model down') }]),
      onError: (error, stage) => errors.push(`${stage}: ${(error as Error).message}`),
    });
    await closedSession(store, 'chat-81', { userId: 'u-42' }, doubleCharge, memory);
    const episode = await store.getEpisode('chat-81');
    expect(errors).toEqual(['summary: model down']);
    expect(episode?.metadata?.summarizedBy).toBe('extractive');
    expect(episode?.summary).toContain('charged twice for order 1234');
  });

  it('sees episodes saved by another memory instance (another process) at the next recall', async () => {
    const store = new InMemoryStore();
    const reader = new EpisodicMemory({ store });
    await closedSession(store, 'chat-81', { userId: 'u-42' }, doubleCharge, new EpisodicMemory());
    expect(await reader.recall({ userId: 'u-42', query: 'parcel headphones' })).toEqual([]);
    await closedSession(store, 'chat-82', { userId: 'u-42' }, lateParcel, new EpisodicMemory());
    expect((await reader.recall({ userId: 'u-42', query: 'parcel headphones' })).map((r) => r.episode.id)).toEqual([
      'chat-82',
    ]);
  });

  it('rejects bad recall input and missing configuration with named errors', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory({ store });
    await expect(memory.recall({ userId: '', query: 'refund' })).rejects.toThrow(InvalidInputError);
    await expect(memory.recall({ userId: 'u-42', query: 'refund', k: 0 })).rejects.toThrow(
      /k must be a positive integer, got 0/,
    );
    await expect(memory.recall({ userId: 'u-42', query: 'refund', mode: 'embedding' })).rejects.toThrow(
      ConfigurationError,
    );
    await expect(new EpisodicMemory().recall({ userId: 'u-42', query: 'refund' })).rejects.toThrow(/needs a store/);
    expect(() => new EpisodicMemory({ recall: { mode: 'hybrid' } })).toThrow(/needs an embedder/);
  });
});
