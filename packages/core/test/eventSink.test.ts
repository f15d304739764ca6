/**
 * `Executor.run(input, emit)`: the events of an activation emitted into one synchronous sink instead
 * of yielded through a generator per layer, and `EventChannel`, which reads such a run as an async
 * generator (the handoff turn's stream). The events and the outcome must be the ones `execute` gives.
 */
import {
  AgentExecutor,
  agent,
  type BatonEvent,
  EventChannel,
  type ExecutorInput,
  type ExecutorOutcome,
  tool,
} from '@baton/core';
import { ScriptedModel, type ScriptedResponse } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { executorInput, runExecutor, TestJournal } from './support/testJournal.js';

/** An agent that looks two orders up at once (one lookup fails), then answers in three deltas. */
function orders(ran: string[]) {
  const lookUp = tool({
    name: 'look_up_order',
    description: 'Finds an order by id.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      ran.push(orderId);
      await new Promise((resolve) => setTimeout(resolve, orderId === 'A-1' ? 20 : 1));
      if (orderId === 'B-2') throw new Error('no such order');
      return { orderId, status: 'shipped' };
    },
  });
  const script: ScriptedResponse[] = [
    {
      toolCalls: [
        { id: 'call_a', name: 'look_up_order', arguments: { orderId: 'A-1' } },
        { id: 'call_b', name: 'look_up_order', arguments: { orderId: 'B-2' } },
      ],
      usage: { inputTokens: 10, outputTokens: 4 },
    },
    { text: 'Order A-1 has shipped; B-2 was not found.', usage: { inputTokens: 30, outputTokens: 11 } },
  ];
  return new AgentExecutor(
    agent({
      name: 'orders',
      description: 'Orders.',
      instructions: 'You handle orders.',
      tools: [lookUp],
      model: new ScriptedModel(script, { chunkSize: 16 }),
    }),
  );
}

/** Events and outcome without what differs between two runs (ids, times, durations). */
function comparable(events: readonly BatonEvent[], outcome: ExecutorOutcome): unknown {
  return JSON.parse(JSON.stringify({ events, outcome }), (key, value) =>
    key === 'id' || key === 'createdAt' || key === 'durationMs' ? '…' : value,
  );
}

const inputFor = (journal: TestJournal): ExecutorInput => executorInput(journal);

describe('Executor.run: one event sink per activation', () => {
  it('AgentExecutor.run emits the events execute yields, in the same order, and returns the same outcome and commits', async () => {
    const viaGenerator = new TestJournal();
    await viaGenerator.commit([{ role: 'user', content: 'Where are A-1 and B-2?' }]);
    const ranA: string[] = [];
    const generated = await runExecutor(orders(ranA), viaGenerator);

    const viaSink = new TestJournal();
    await viaSink.commit([{ role: 'user', content: 'Where are A-1 and B-2?' }]);
    const ranB: string[] = [];
    const emitted: BatonEvent[] = [];
    const outcome = await orders(ranB).run(inputFor(viaSink), (event) => emitted.push(event));

    expect(emitted.map((e) => e.type)).toEqual([
      'model.started',
      'model.completed',
      'message',
      'tool.call',
      'tool.call',
      'tool.result',
      'tool.result',
      'message',
      'message',
      'model.started',
      'message.delta',
      'message.delta',
      'message.delta',
      'model.completed',
      'message',
    ]);
    expect(comparable(emitted, outcome)).toEqual(comparable(generated.events, generated.outcome));
    expect(outcome).toMatchObject({ type: 'reply', usage: { inputTokens: 40, outputTokens: 15, requests: 2 } });
    expect(viaSink.messages.map((m) => [m.role, m.content])).toEqual(
      viaGenerator.messages.map((m) => [m.role, m.content]),
    );
    expect(viaSink.commits).toEqual(viaGenerator.commits);
    expect(ranB).toEqual(ranA);
  });

  it('execute read through an EventChannel stops where a generator stops: leaving at tool.call runs no tool and commits nothing more', async () => {
    const journal = new TestJournal();
    await journal.commit([{ role: 'user', content: 'Where are A-1 and B-2?' }]);
    const ran: string[] = [];
    const seen: string[] = [];
    const generator = orders(ran).execute(inputFor(journal));
    for await (const event of { [Symbol.asyncIterator]: () => generator }) {
      seen.push(event.type);
      if (event.type === 'tool.call') break;
    }
    expect(seen).toEqual(['model.started', 'model.completed', 'message', 'tool.call']);
    expect(ran).toEqual([]);
    expect(journal.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(journal.recorded).toEqual([]);
  });
});

describe('EventChannel', () => {
  it('gives the emitted events in order, then the failure of the run after them', async () => {
    const channel = new EventChannel(async (sink) => {
      sink.emit({ type: 'agent.started', sessionId: 's', branchId: 'main', agent: 'a' });
      sink.emit({ type: 'agent.started', sessionId: 's', branchId: 'main', agent: 'b' });
      await sink.ready();
      throw new Error('model endpoint down');
    });
    const agents: string[] = [];
    await expect(
      (async () => {
        for await (const event of channel) if (event.type === 'agent.started') agents.push(event.agent);
      })(),
    ).rejects.toThrow('model endpoint down');
    expect(agents).toEqual(['a', 'b']);
    expect(await channel.next()).toEqual({ done: true, value: undefined });
  });

  it('a reader that leaves stops the run at its next ready(): its finally runs before return() resolves, and nothing after it runs', async () => {
    const steps: string[] = [];
    const channel = new EventChannel(async (sink) => {
      try {
        sink.emit({ type: 'agent.started', sessionId: 's', branchId: 'main', agent: 'a' });
        steps.push('emitted');
        const ready = sink.ready();
        if (ready !== undefined) await ready;
        steps.push('side effect');
      } finally {
        await new Promise((resolve) => setTimeout(resolve, 5));
        steps.push('cleaned up');
      }
    });
    const first = await channel.next();
    expect(first.done === false && first.value.type).toBe('agent.started');
    await channel.return();
    expect(steps).toEqual(['emitted', 'cleaned up']);
  });

  it('never runs a run whose reader left before reading', async () => {
    let ran = false;
    const channel = new EventChannel(async () => {
      ran = true;
    });
    expect(await channel.return()).toEqual({ done: true, value: undefined });
    expect(await channel.next()).toEqual({ done: true, value: undefined });
    expect(ran).toBe(false);
  });
});
