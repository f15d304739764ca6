import { HumanExecutor, InMemoryHumanQueue, InvalidIdError, NotFoundError, type Store } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

/** A helper agent that hands a message asking for a person to a human operator (a HumanExecutor), else answers. */
function operatorDesk(store: Store) {
  const helper = scriptedAgent('helper', (request) => {
    const last = lastOf(request);
    if (last?.role === 'user' && last.content.includes('a person'))
      return { toolCalls: [{ name: 'handoff_to_operator', arguments: {} }] };
    return { text: 'How can I help?' };
  });
  const queue = new InMemoryHumanQueue();
  const operator = new HumanExecutor({ name: 'operator', description: 'A human for hard cases.', queue });
  const workflow = new HandoffBuilder().participants(helper, operator).coordinator(helper).store(store).build();
  return { workflow, queue };
}

describe.each(embeddedStores())('workflow.eraseUser (%s)', (_name, makeStore) => {
  afterAll(disposeStores);

  it("erases the user's sessions and withdraws their operator tasks on every branch; others' tasks stay", async () => {
    const store = await makeStore();
    const { workflow, queue } = operatorDesk(store);
    const main = await workflow.session({ id: 'erased', tenantId: 'acme', userId: 'u-42' });
    await collect(main.send('hello'));
    const fork = await main.fork({ atSeq: main.messages.at(-1)!.seq, branchId: 'alt' });
    await collect(fork.send('My card 4111 was charged twice, I want a person'));
    await collect(main.send('Card 4111 again, let me talk to a person'));
    const other = await workflow.session({ id: 'kept', tenantId: 'acme', userId: 'u-7' });
    await collect(other.send('I need a person about my parcel'));
    expect((await queue.list()).map((task) => task.sessionId).sort()).toEqual(['erased', 'erased', 'kept']);

    const removed = await workflow.eraseUser({ tenantId: 'acme', userId: 'u-42' });

    expect(removed).toMatchObject({ sessions: 1, branches: 2 });
    const left = await queue.list();
    expect(left.map((task) => task.sessionId)).toEqual(['kept']);
    expect(left.some((task) => task.prompt.includes('4111'))).toBe(false);
    expect(await store.getSession('erased', { tenantId: 'acme' })).toBeUndefined();
    // The session object of the erased session does not serve it from memory.
    await expect(collect(main.send('still there?'))).rejects.toThrow(NotFoundError);
    // The other user's operator still answers through the session.
    const [request] = other.pendingRequests;
    await collect(other.respond(request!.id, 'Your parcel is on its way.'));
    expect(await queue.list()).toEqual([]);
    expect((await workflow.eraseUser({ tenantId: 'acme', userId: 'u-42' })).sessions).toBe(0);
  });

  it('erases only the untenanted sessions of a user when no tenant is given, and refuses an unsafe id', async () => {
    const store = await makeStore();
    const { workflow, queue } = operatorDesk(store);
    await collect((await workflow.session({ id: 'plain', userId: 'u-1' })).send('a person, please'));
    await collect(
      (await workflow.session({ id: 'tenanted', tenantId: 'acme', userId: 'u-1' })).send('a person, please'),
    );

    expect((await workflow.eraseUser({ userId: 'u-1' })).sessions).toBe(1);

    expect((await queue.list()).map((task) => task.sessionId)).toEqual(['tenanted']);
    await expect(workflow.eraseUser({ userId: '../u-1' })).rejects.toThrow(InvalidIdError);
  });
});
