import {
  AbortedError,
  type ContextProvider,
  endConversationControl,
  InMemoryStore,
  InvalidIdError,
  InvalidInputError,
  ModelProviderError,
  NotFoundError,
  SessionClosedError,
  tool,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, deskAgents, lastOf, ofType, scriptedAgent } from './support/helpers.js';

describe('HandoffSession', () => {
  it('context providers: beforeTurn context reaches the model, not the history; prepareModelInput composes; onSessionClose runs once', async () => {
    const { triage, billing } = deskAgents();
    const calls: string[] = [];
    const recall: ContextProvider = {
      name: 'recall',
      beforeTurn: async ({ input }) => {
        calls.push(`before:${input}`);
        return [{ role: 'context', content: `Recalled for "${input}"` }];
      },
      prepareModelInput: (messages) => [messages[0]!, { role: 'system', content: 'first' }, ...messages.slice(1)],
      onSessionClose: async ({ reason, agents, session }) => {
        calls.push(
          `close:${reason}:${agents.join('+')}:${session.status}:${session.closedReason}:${session.closedAt !== undefined}`,
        );
      },
    };
    const shaper: ContextProvider = {
      name: 'shaper',
      prepareModelInput: async (messages) => [
        messages[0]!,
        { role: 'system', content: 'second' },
        ...messages.slice(1),
      ],
    };
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .contextProviders(recall)
      .memory(shaper)
      .store(store)
      .build()
      .session({ id: 's-1' });
    await collect(session.send('Refund?'));
    const sent = billing.model.requests[0]!.messages;
    expect(sent.map((m) => m.content)).toEqual([
      'You are billing.',
      'second',
      'first',
      'Recalled for "Refund?"',
      'Refund?',
    ]);
    expect((await store.readMessages('s-1', 'main')).some((m) => m.role === 'context')).toBe(false);
    await session.close({ reason: 'resolved' });
    await session.close({ reason: 'again' });
    expect(calls).toEqual(['before:Refund?', 'close:resolved:triage+billing:closed:resolved:true']);
    const stored = await store.getSession('s-1');
    expect(stored).toMatchObject({ status: 'closed', closedReason: 'resolved' });
  });

  it('closing while a request is pending answers the waiting call, so no tool call dangles', async () => {
    const asker = scriptedAgent('asker', () => ({
      toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Order number?' } }],
    }));
    const store = new InMemoryStore();
    const session = await new HandoffBuilder().participants(asker).store(store).build().session({ id: 's-2' });
    await collect(session.send('Help'));
    const [request] = session.pendingRequests;
    await session.close({ reason: 'timeout' });
    const stored = await store.readMessages('s-2', 'main');
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(stored.at(-1)).toMatchObject({ role: 'tool', isError: true });
    expect(stored.at(-1)!.content).toContain('Cancelled');
    expect(session.pendingRequests).toEqual([]);
    await expect(collect(session.respond(request!.id, '1234'))).rejects.toThrow(SessionClosedError);
  });

  it('an agent’s end_conversation closes the session at the end of the turn', async () => {
    const bye = tool({
      name: 'end_conversation',
      description: 'Ends it.',
      parameters: z.object({ reason: z.string() }),
      execute: ({ reason }) => endConversationControl(reason),
    });
    const helper = scriptedAgent(
      'helper',
      () => ({ toolCalls: [{ name: 'end_conversation', arguments: { reason: 'user said goodbye' } }] }),
      [bye],
    );
    const closed: string[] = [];
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(helper)
      .memory({ name: 'spy', onSessionClose: async ({ reason }) => void closed.push(reason) })
      .store(store)
      .build()
      .session({ id: 's-3' });
    const events = await collect(session.send('Bye'));
    expect(ofType(events, 'session.closed')).toEqual([expect.objectContaining({ reason: 'user said goodbye' })]);
    expect(events.at(-1)?.type).toBe('turn.completed');
    expect(closed).toEqual(['user said goodbye']);
    expect((await store.getSession('s-3'))!.status).toBe('closed');
  });

  it('a failed model call ends the call with a fatal error event; the next call resumes the unfinished turn', async () => {
    let fail = true;
    const helper = scriptedAgent('helper', () =>
      fail ? { error: new ModelProviderError('upstream 503', { status: 503 }) } : { text: 'Recovered.' },
    );
    const store = new InMemoryStore();
    const session = await new HandoffBuilder().participants(helper).store(store).build().session({ id: 's-4' });
    const events: string[] = [];
    await expect(
      (async () => {
        for await (const event of session.send('Hello'))
          events.push(event.type === 'error' ? `error:${event.code}:${event.fatal}` : event.type);
      })(),
    ).rejects.toThrow(ModelProviderError);
    expect(events.at(-1)).toBe('error:MODEL_PROVIDER:true');
    expect(session.routingState).toBe('running');
    fail = false;
    const resumed = await collect(session.resume());
    expect(ofType(resumed, 'turn.completed')).toHaveLength(1);
    expect((await store.readMessages('s-4', 'main')).map((m) => m.content)).toEqual(['Hello', 'Recovered.']);
    expect(await collect(session.resume())).toEqual([]);
  });

  it('a cancelled turn throws AbortedError and is finished by the next send', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(store)
      .build()
      .session({ id: 's-5' });
    const controller = new AbortController();
    const stream = session.send('First', { signal: controller.signal });
    await expect(
      (async () => {
        for await (const event of stream) if (event.type === 'handoff') controller.abort();
      })(),
    ).rejects.toThrow(AbortedError);
    const events = await collect(session.send('Second'));
    expect(ofType(events, 'turn.completed').map((e) => e.turn)).toEqual([1, 2]);
    const stored = await store.readMessages('s-5', 'main');
    expect(stored.filter((m) => m.agent === 'billing').map((m) => m.content)).toEqual([
      'Answer to: First',
      'Answer to: Second',
    ]);
    expect(danglingToolCalls(stored)).toEqual([]);
  });

  it('send() answers the only pending user_input request, and refuses when several are pending', async () => {
    const asker = scriptedAgent('asker', (request) => {
      const last = lastOf(request);
      if (last?.role === 'user' && last.content === 'two') {
        return {
          toolCalls: [
            { name: 'request_user_input', arguments: { prompt: 'A?' } },
            { name: 'request_user_input', arguments: { prompt: 'B?' } },
          ],
        };
      }
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Order?' } }] };
      return { text: `got ${last?.content}` };
    });
    const session = await new HandoffBuilder().participants(asker).build().session({ id: 's-6' });
    await collect(session.send('one'));
    await collect(session.send('1234'));
    expect(session.messages.at(-1)?.content).toBe('got 1234');
    await collect(session.send('two'));
    expect(session.pendingRequests).toHaveLength(2);
    await expect(collect(session.send('x'))).rejects.toThrow(InvalidInputError);
  });

  it('turn is the number turn.started and turn.completed carry; an answer continues it; a reopened session knows it', async () => {
    const asker = scriptedAgent('asker', (request) => {
      const last = lastOf(request);
      if (last?.role === 'user' && last.content === 'ask')
        return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Order?' } }] };
      return { text: `got ${last?.content}` };
    });
    const workflow = new HandoffBuilder().participants(asker).store(new InMemoryStore()).build();
    const session = await workflow.session({ id: 's-turn' });
    expect(session.turn).toBe(0);
    const numbers = async (events: Promise<{ type: string; turn?: number }[]>) =>
      (await events).filter((e) => e.type.startsWith('turn.')).map((e) => e.turn);
    expect(await numbers(collect(session.send('hello')))).toEqual([1, 1]);
    expect(session.turn).toBe(1);
    expect(await numbers(collect(session.send('ask')))).toEqual([2, 2]);
    expect(session.turn).toBe(2);
    expect(await numbers(collect(session.send('1234')))).toEqual([2, 2]); // answers the user_input request
    expect(session.turn).toBe(2);
    expect((await workflow.session({ id: 's-turn' })).turn).toBe(2);
  });

  it('refuses a bad session id, a missing branch and another user’s session', async () => {
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder().participants(triage, billing).build();
    await expect(workflow.session({ id: '../etc' })).rejects.toThrow(InvalidIdError);
    await expect(workflow.session({ id: 's-7', branch: 'nope' })).rejects.toThrow(NotFoundError);
    await workflow.session({ id: 's-8', userId: 'u-1' });
    await expect(workflow.session({ id: 's-8', userId: 'u-2' })).rejects.toThrow(/belongs to another user/);
    await expect(collect((await workflow.session({ id: 's-8' })).send(42 as never))).rejects.toThrow(InvalidInputError);
  });

  it('context providers hear what the user just said: the new message, or the answer to a request', async () => {
    const heard: string[] = [];
    const asker = scriptedAgent('asker', (request) =>
      lastOf(request)?.role === 'user'
        ? { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Order number?' } }] }
        : { text: 'Thanks.' },
    );
    const workflow = new HandoffBuilder()
      .participants(asker)
      .contextProviders({
        name: 'ear',
        beforeTurn: async ({ input }) => {
          heard.push(input);
          return undefined;
        },
      })
      .build();
    const session = await workflow.session({ id: 's-10' });
    await collect(session.send('Where is my order?'));
    await collect(session.respond(session.pendingRequests[0]!.id, 'Order 1234'));
    expect(heard).toEqual(['Where is my order?', 'Order 1234']);
  });

  it('gives a session opened without a user the user who opens it next, once', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const workflow = new HandoffBuilder().participants(triage, billing).store(store).build();
    await workflow.session({ id: 's-9' });
    expect((await store.getSession('s-9'))?.userId).toBeUndefined();
    await workflow.session({ id: 's-9', userId: 'u-1' });
    expect((await store.getSession('s-9'))?.userId).toBe('u-1');
    await expect(workflow.session({ id: 's-9', userId: 'u-2' })).rejects.toThrow(/belongs to another user/);
  });
});
