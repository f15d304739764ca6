import { HumanExecutor, InMemoryHumanQueue, InvalidInputError, type Store } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckpointFrequency } from '../src/index.js';
import { HandoffBuilder } from '../src/index.js';
import {
  collect,
  danglingToolCalls,
  disposeStores,
  embeddedStores,
  lastOf,
  ofType,
  scriptedAgent,
} from './support/helpers.js';

/** One "process": triage hands every user message to a human operator; billing is there to be handed to. */
function humanDesk(store: Store, queue: InMemoryHumanQueue, every: CheckpointFrequency = 'turn') {
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_operator', arguments: {} }] }
      : { text: 'Anything else?' },
  );
  const billing = scriptedAgent('billing', () => ({ text: 'Billing here: refunded.' }));
  const operator = new HumanExecutor({ name: 'operator', description: 'A human for hard cases.', queue });
  const desk = new HandoffBuilder({ name: 'desk' })
    .participants(triage, operator, billing)
    .coordinator(triage)
    .handoffs(triage, [operator])
    .handoffs(operator, [billing, triage])
    .store(store)
    .checkpoints({ every })
    .build();
  return { desk, triage, billing };
}

describe.each(embeddedStores())('HumanExecutor on %s', (_name, makeStore) => {
  afterAll(disposeStores);

  it('queues the step and pauses on a human_step request (no tool call); the answer after a restart is the operator reply', async () => {
    const store = await makeStore();
    const queue = new InMemoryHumanQueue();
    const first = humanDesk(store, queue);
    const session = await first.desk.session({ id: 'human-1' });
    const events = await collect(session.send('My parcel arrived broken'));
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed' });
    const [request] = ofType(events, 'request').map((e) => e.request);
    expect(request).toMatchObject({ type: 'human_step', agent: 'operator', prompt: 'My parcel arrived broken' });
    expect(request).not.toHaveProperty('toolCallId');
    const [task] = await queue.list();
    expect(task).toMatchObject({
      sessionId: 'human-1',
      branchId: 'main',
      agent: 'operator',
      prompt: 'My parcel arrived broken',
    });
    expect(request!.type === 'human_step' && request!.stepId).toBe(task!.id);

    // A restart while the human has not answered: new objects over the same store (and the same queue service).
    const second = humanDesk(store, queue);
    const restored = await second.desk.session({ id: 'human-1' });
    expect(restored.routingState).toBe('awaitingRequest');
    expect(restored.pendingRequests).toEqual([request]);
    await expect(collect(restored.respond(request!.id, { approved: true }))).rejects.toThrow(InvalidInputError);
    const answered = await collect(restored.respond(request!.id, 'Sorry about that: a new one is on its way.'));
    expect(answered.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'triage' });
    const stored = await store.readMessages('human-1', 'main');
    expect(stored.at(-1)).toMatchObject({
      role: 'assistant',
      agent: 'operator',
      content: 'Sorry about that: a new one is on its way.',
    });
    expect(stored.filter((m) => m.agent === 'operator')).toHaveLength(1);
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(await queue.list()).toEqual([]);
    expect(restored.pendingRequests).toEqual([]);
  });

  it("an operator's handoff moves control to another participant, which answers", async () => {
    const store = await makeStore();
    const queue = new InMemoryHumanQueue();
    const { desk, billing } = humanDesk(store, queue);
    const session = await desk.session({ id: 'human-2' });
    await collect(session.send('I was charged twice'));
    const [request] = session.pendingRequests;
    const events = await collect(session.respond(request!.id, { handoff: 'billing', reason: 'a charge' }));
    expect(ofType(events, 'handoff')).toEqual([
      expect.objectContaining({ from: 'operator', to: 'billing', reason: 'a charge' }),
    ]);
    expect(billing.model.requests).toHaveLength(1);
    const stored = await store.readMessages('human-2', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'Billing here: refunded.' });
    // The operator's handoff is in the history, as an agent's would be: the call and its result.
    const call = stored.find((m) => m.agent === 'operator' && m.role === 'assistant');
    expect(call).toMatchObject({
      toolCalls: [{ name: 'handoff_to_billing', arguments: '{"reason":"a charge"}' }],
      metadata: { humanStep: request!.type === 'human_step' ? request!.stepId : '' },
    });
    expect(stored.find((m) => m.role === 'tool' && m.toolCallId === call?.toolCalls?.[0]?.id)).toMatchObject({
      agent: 'operator',
      content: 'Transferred to billing.',
      isError: false,
      metadata: { control: { kind: 'handoff', target: 'billing', reason: 'a charge' } },
    });
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(await queue.list()).toEqual([]);
    // A new process over the same store agrees: the reply ended the turn, control is back at triage.
    const reopened = await humanDesk(store, queue).desk.session({ id: 'human-2' });
    expect(reopened.routingState).toBe('idle');
    expect(reopened.pendingRequests).toEqual([]);
  });

  it('a handoff the routing refuses is stored with its error result and the operator is asked again', async () => {
    const store = await makeStore();
    const queue = new InMemoryHumanQueue();
    const { desk, billing } = humanDesk(store, queue);
    const session = await desk.session({ id: 'human-4' });
    await collect(session.send('I was charged twice'));
    const [request] = session.pendingRequests;
    const events = await collect(session.respond(request!.id, { handoff: 'shipping' }));
    expect(ofType(events, 'handoff')).toEqual([]);
    expect(billing.model.requests).toHaveLength(0);
    const stored = await store.readMessages('human-4', 'main');
    expect(stored.at(-1)).toMatchObject({
      role: 'tool',
      agent: 'operator',
      toolName: 'handoff_to_shipping',
      isError: true,
    });
    expect(stored.at(-1)?.content).toMatch(/no tool named "handoff_to_shipping"/);
    expect(danglingToolCalls(stored)).toEqual([]);
    const [again] = session.pendingRequests;
    expect(again).toMatchObject({ type: 'human_step', agent: 'operator' });
    expect(again!.id).not.toBe(request!.id);
    const tasks = await queue.list();
    expect(tasks.map((t) => t.id)).toEqual([again!.type === 'human_step' ? again!.stepId : '']);
    expect(tasks[0]!.prompt).toMatch(/Your handoff was refused/);
    await collect(session.respond(again!.id, { handoff: 'billing' }));
    expect((await store.readMessages('human-4', 'main')).at(-1)).toMatchObject({
      agent: 'billing',
      content: 'Billing here: refunded.',
    });
    expect(await queue.list()).toEqual([]);
  });

  it('removes the queued task when the paused turn is discarded or the session closed', async () => {
    const store = await makeStore();
    const queue = new InMemoryHumanQueue();
    const { desk } = humanDesk(store, queue);
    const discarded = await desk.session({ id: 'human-5' });
    await collect(discarded.send('Help'));
    const closed = await desk.session({ id: 'human-6' });
    await collect(closed.send('Help too'));
    expect((await queue.list()).map((t) => t.sessionId).sort()).toEqual(['human-5', 'human-6']);
    await discarded.discard();
    expect((await queue.list()).map((t) => t.sessionId)).toEqual(['human-6']);
    // Closed in another process: the session is loaded from the store, the task withdrawn on close.
    const reopened = await humanDesk(store, queue).desk.session({ id: 'human-6' });
    await reopened.close({ reason: 'abandoned' });
    expect(await queue.list()).toEqual([]);
    expect(danglingToolCalls(await store.readMessages('human-6', 'main'))).toEqual([]);
  });

  it("with 'manual' checkpoints, a reload after the answer replays it from the stored reply: nothing is pending again", async () => {
    const store = await makeStore();
    const queue = new InMemoryHumanQueue();
    const first = humanDesk(store, queue, 'manual');
    const session = await first.desk.session({ id: 'human-3' });
    await collect(session.send('Help'));
    const [request] = session.pendingRequests;
    await collect(session.respond(request!.id, { reply: 'Done.' }));
    const reopened = await humanDesk(store, queue, 'manual').desk.session({ id: 'human-3' });
    expect(reopened.pendingRequests).toEqual([]);
    expect(reopened.routingState).toBe('idle');
    expect(reopened.activeAgent).toBe('triage');
  });
});
