import { AmbiguousBranchError, NotFoundError, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

afterAll(disposeStores);

describe.each(embeddedStores())('workflow.run({ sessionId, input }) on %s', (_, makeStore) => {
  it('creates the session on the first call, continues it on the next, and persists every turn', async () => {
    const store = await makeStore();
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).store(store).build();
    const first = await workflow.run({ sessionId: 'run-1', userId: 'u-1', input: 'I was charged twice' });
    expect(first).toMatchObject({ sessionId: 'run-1', output: 'Answer to: I was charged twice', agent: 'billing' });
    expect(first.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    const second = await workflow.run({ sessionId: 'run-1', userId: 'u-1', input: 'and the refund?' });
    expect(second.messages.map((m) => m.seq)).toEqual([5, 6, 7, 8]); // only what this call committed
    expect(second.output).toBe('Answer to: and the refund?');
    expect((await store.readMessages('run-1', 'main')).length).toBe(8);
    expect((await store.getSession('run-1'))?.userId).toBe('u-1');
  });

  it('takes several user messages sent in a row as one turn', async () => {
    const store = await makeStore();
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).store(store).build();
    const result = await workflow.run({ sessionId: 'run-2', input: ['hi', 'my card was charged twice'] });
    expect(result.messages.slice(0, 2).map((m) => `${m.role}:${m.content}`)).toEqual([
      'user:hi',
      'user:my card was charged twice',
    ]);
    expect(result.events.filter((e) => e.type === 'turn.started')).toHaveLength(1);
    expect(result.output).toBe('Answer to: my card was charged twice');
    // The model saw both messages once each.
    const request = billing.model.requests.at(-1)!;
    expect(request.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'hi',
      'my card was charged twice',
    ]);
  });

  it('passes per-turn settings to every agent of that turn only: extra instructions, model settings, a tool filter', async () => {
    const lookUp = tool({
      name: 'look_up_order',
      description: 'Looks up an order.',
      parameters: z.object({ id: z.string() }),
      execute: async () => 'shipped',
    });
    const refund = tool({
      name: 'refund_order',
      description: 'Refunds an order.',
      parameters: z.object({ id: z.string() }),
      execute: async () => 'refunded',
    });
    const billing = scriptedAgent(
      'billing',
      (request) => (lastOf(request)?.role === 'tool' ? { text: 'Done.' } : { text: 'Hello.' }),
      [lookUp, refund],
    );
    const workflow = new HandoffBuilder({ name: 'desk' })
      .participants(billing)
      .store(await makeStore())
      .build();
    await workflow.run({
      sessionId: 'run-3',
      input: 'hi',
      instructions: 'Answer in French.',
      modelSettings: { temperature: 0, maxOutputTokens: 50 },
      tools: ['look_up_order'],
    });
    const withSettings = billing.model.requests.at(-1)!;
    expect(withSettings.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'You are billing.' },
      { role: 'system', content: 'Answer in French.' },
    ]);
    expect(withSettings.settings).toEqual({ temperature: 0, maxOutputTokens: 50 });
    expect(withSettings.toolNames).toContain('look_up_order');
    expect(withSettings.toolNames).not.toContain('refund_order');
    expect(withSettings.toolNames).toContain('request_user_input'); // the runtime's own tools stay

    await workflow.run({ sessionId: 'run-3', input: 'again' });
    const plain = billing.model.requests.at(-1)!;
    expect(plain.messages.filter((m) => m.role === 'system')).toHaveLength(1);
    expect(plain.settings).toBeUndefined();
    expect(plain.toolNames).toContain('refund_order');
  });

  it('with create: false refuses an unknown session id and creates nothing', async () => {
    const store = await makeStore();
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).store(store).build();
    await expect(workflow.run({ sessionId: 'typo', input: 'hi', create: false })).rejects.toThrow(NotFoundError);
    await expect(workflow.session({ id: 'typo', create: false })).rejects.toThrow(NotFoundError);
    expect(await store.getSession('typo')).toBeUndefined();
  });
});

describe.each(embeddedStores())('opening a forked session without naming a branch on %s', (_, makeStore) => {
  it('throws AmbiguousBranchError listing the branches; naming one opens it; a session with only main opens as before', async () => {
    const store = await makeStore();
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).store(store).build();
    const session = await workflow.session({ id: 'amb-1' });
    await collect(session.send('first'));
    expect((await workflow.session({ id: 'amb-1' })).branchId).toBe('main');
    await session.fork({ atSeq: 4, branchId: 'retry' });
    const error = await workflow.session({ id: 'amb-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousBranchError);
    expect((error as AmbiguousBranchError).branches).toEqual(['main', 'retry']);
    expect((error as Error).message).toContain('"retry"');
    expect((await workflow.session({ id: 'amb-1', branch: 'retry' })).branchId).toBe('retry');
    await expect(workflow.run({ sessionId: 'amb-1', input: 'x' })).rejects.toThrow(AmbiguousBranchError);
    expect((await workflow.run({ sessionId: 'amb-1', branch: 'main', input: 'second' })).output).toBe(
      'Answer to: second',
    );
  });
});
