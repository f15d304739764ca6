import { InvalidIdError, InvalidInputError } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, disposeStores, embeddedStores, scriptedAgent } from './support/helpers.js';

afterAll(disposeStores);

/** A one-agent workflow named `name` whose agent signs its answers with that name. */
function desk(name: string, store: Parameters<HandoffBuilder['store']>[0]) {
  const agent = scriptedAgent(`${name}-agent`, (request) => ({
    text: `${name} heard: ${request.messages.findLast((m) => m.role === 'user')?.content}`,
  }));
  return new HandoffBuilder({ name }).participants(agent).store(store).build();
}

describe.each(embeddedStores())('one conversation shared by several workflows on %s', (_, makeStore) => {
  it('each workflow keeps its own thread of the conversation, keyed by (conversationId, workflow name); reopening finds it', async () => {
    const store = await makeStore();
    const billing = desk('billing-desk', store);
    const shipping = desk('shipping-desk', store);
    const a = await billing.session({ conversationId: 'chat-81', userId: 'u-1' });
    const b = await shipping.session({ conversationId: 'chat-81', userId: 'u-1' });
    expect([a.id, b.id]).toEqual(['billing-desk:chat-81', 'shipping-desk:chat-81']);
    await collect(a.send('refund please'));
    await collect(b.send('where is my parcel?'));
    expect((await store.readMessages(a.id, 'main')).map((m) => m.content)).toEqual([
      'refund please',
      'billing-desk heard: refund please',
    ]);
    expect((await store.readMessages(b.id, 'main')).map((m) => m.content)).toEqual([
      'where is my parcel?',
      'shipping-desk heard: where is my parcel?',
    ]);

    const again = await desk('billing-desk', store).run({ conversationId: 'chat-81', userId: 'u-1', input: 'thanks' });
    expect(again.sessionId).toBe('billing-desk:chat-81');
    expect((await store.readMessages('billing-desk:chat-81', 'main')).length).toBe(4);
    expect(billing.sessionIdOf('chat-81')).toBe('billing-desk:chat-81');
  });

  it('refuses to open by both id and conversationId, and a conversation id that makes an unsafe session id', async () => {
    const store = await makeStore();
    const billing = desk('billing-desk', store);
    await expect(billing.session({ id: 'x', conversationId: 'y' } as never)).rejects.toThrow(InvalidInputError);
    await expect(billing.session({ conversationId: '../etc' })).rejects.toThrow(InvalidIdError);
    await expect(billing.session({ conversationId: 'x'.repeat(200) })).rejects.toThrow(InvalidIdError);
    expect(await store.listSessions()).toEqual([]);
  });
});
