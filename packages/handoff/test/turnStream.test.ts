import { InMemoryStore, InvalidInputError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents, ofType } from './support/helpers.js';
import { approvalDesk } from './support/scenarioDesks.js';

function desk() {
  const { triage, billing } = deskAgents();
  const store = new InMemoryStore();
  const workflow = new HandoffBuilder().participants(triage, billing).store(store).build();
  return { workflow, store, triage, billing };
}

describe('TurnStream: send and respond can be awaited or iterated (docs/architecture.md invariant 8)', () => {
  it('await session.send(text) runs the turn and resolves to the answer, the messages, usage and the next agent', async () => {
    const { workflow, store } = desk();
    const session = await workflow.session({ id: 'await-1' });
    const result = await session.send('Refund please');
    expect(result.completed).toBe(true);
    expect(result.message).toMatchObject({ role: 'assistant', agent: 'billing', content: 'Answer to: Refund please' });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(result.nextAgent).toBe('triage');
    expect(result.pendingRequests).toEqual([]);
    expect(result.usage.inputTokens).toBeGreaterThanOrEqual(0);
    expect((await store.readMessages('await-1', 'main')).map((m) => m.content)).toContain('Answer to: Refund please');
  });

  it('nothing runs before the stream is read or awaited, and it runs once however it is consumed', async () => {
    const { workflow, store, billing } = desk();
    const session = await workflow.session({ id: 'await-2' });
    const stream = session.send('Hello');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.readMessages('await-2', 'main')).toEqual([]);
    const events = await collect(stream);
    const again = await stream; // awaiting after iterating does not start it again
    expect(ofType(events, 'turn.completed')).toHaveLength(1);
    expect(again.message?.content).toBe('Answer to: Hello');
    expect(await stream).toBe(again);
    expect(billing.model.requests).toHaveLength(1);
    expect((await store.readMessages('await-2', 'main')).filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('awaiting while another reader iterates waits for that reader and sees the same turn', async () => {
    const { workflow, billing } = desk();
    const session = await workflow.session({ id: 'await-3' });
    const stream = session.send('Both ways');
    const iterated = collect(stream);
    const [events, result] = await Promise.all([iterated, stream]);
    expect(events.at(-1)?.type).toBe('turn.completed');
    expect(result.message?.content).toBe('Answer to: Both ways');
    expect(billing.model.requests).toHaveLength(1);
  });

  it('respond can be awaited: a paused turn resolves with its pending approval, the approval resolves with the answer', async () => {
    const refunds: string[] = [];
    const { workflow } = approvalDesk(new InMemoryStore(), refunds);
    const session = await workflow.session({ id: 'await-4' });
    const paused = await session.send('Refund 40 EUR');
    expect(paused.completed).toBe(true);
    expect(paused.message).toBeUndefined();
    expect(paused.pendingRequests).toMatchObject([{ type: 'tool_approval', toolName: 'refund' }]);
    const done = await session.respond(paused.pendingRequests[0]!.id, { approved: true });
    expect(done.message?.content).toBe('Done: Refunded 40 EUR.');
    expect(done.pendingRequests).toEqual([]);
    expect(refunds).toEqual(['refund 40']);
  });

  it('a caller mistake rejects the await with the named error and runs nothing', async () => {
    const { workflow, billing } = desk();
    const session = await workflow.session({ id: 'await-5' });
    await expect(session.send(42 as never)).rejects.toThrow(InvalidInputError);
    await expect(session.respond('no-such-request', 'x')).rejects.toThrow(
      /No pending request has id "no-such-request"/,
    );
    expect(billing.model.requests).toHaveLength(0);
  });

  it('a stream left early resolves with what it saw (completed: false), and the next call finishes the turn', async () => {
    const { workflow } = desk();
    const session = await workflow.session({ id: 'await-6' });
    const stream = session.send('Leave early');
    for await (const event of stream) if (event.type === 'handoff') break;
    const partial = await stream;
    expect(partial.completed).toBe(false);
    expect(partial.message).toBeUndefined();
    const resumed = await session.resume();
    expect(resumed.message?.content).toBe('Answer to: Leave early');
  });

  it('disposing a stream (await using) leaves it as return() does; the next call finishes the turn', async () => {
    const { workflow } = desk();
    const session = await workflow.session({ id: 'await-7' });
    const stream = session.send('Dispose early');
    for (
      let step = await stream.next();
      step.done !== true && step.value.type !== 'handoff';
      step = await stream.next()
    );
    await stream[Symbol.asyncDispose]();
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect((await stream).completed).toBe(false);
    expect((await session.resume()).message?.content).toBe('Answer to: Dispose early');
  });
});
