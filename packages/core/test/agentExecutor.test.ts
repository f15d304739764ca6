import {
  AbortedError,
  AgentExecutor,
  agent,
  type BatonEvent,
  MaxStepsExceededError,
  StateContainer,
  type Tool,
  tool,
} from '@baton/core';
import { ScriptedModel, type ScriptedResponse } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred, within } from './support/deferred.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

const lookUpOrder = (ran: string[] = []) =>
  tool({
    name: 'look_up_order',
    description: 'Finds an order by id.',
    parameters: z.object({ orderId: z.string().regex(/^[A-Z]-\d+$/, 'use the form A-123') }),
    execute: async ({ orderId }) => {
      ran.push(orderId);
      return { orderId, status: 'shipped' };
    },
  });

function executorWith(script: ScriptedResponse[], tools: Tool[] = [], maxSteps?: number) {
  const model = new ScriptedModel(script);
  const options = { name: 'orders', description: 'Orders.', instructions: 'You handle orders.', tools, model };
  return { model, executor: new AgentExecutor(agent(maxSteps === undefined ? options : { ...options, maxSteps })) };
}

async function userSays(text: string): Promise<TestJournal> {
  const journal = new TestJournal();
  await journal.commit([{ role: 'user', content: text }]);
  return journal;
}

const toolResults = (events: BatonEvent[]) => events.flatMap((e) => (e.type === 'tool.result' ? [e] : []));

describe('AgentExecutor', () => {
  it('returns a final answer, streaming its deltas and committing it after the user message', async () => {
    const { executor, model } = executorWith([
      { text: 'Your order ships tomorrow.', usage: { inputTokens: 7, outputTokens: 5 } },
    ]);
    const journal = await userSays('When does my order ship?');
    const { outcome, events } = await runExecutor(executor, journal);

    expect(outcome.type).toBe('reply');
    expect(outcome.type === 'reply' && outcome.message).toMatchObject({
      role: 'assistant',
      agent: 'orders',
      seq: 2,
      content: 'Your order ships tomorrow.',
    });
    expect(outcome.usage).toEqual({ inputTokens: 7, outputTokens: 5, totalTokens: 12, requests: 1 });
    const deltas = events.flatMap((e) => (e.type === 'message.delta' ? [e.delta] : []));
    expect(deltas.join('')).toBe('Your order ships tomorrow.');
    expect(model.requests[0]?.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'You handle orders.'],
      ['user', 'When does my order ship?'],
    ]);
    expect(journal.messages.map((m) => m.seq)).toEqual([1, 2]);
  });

  it('runs parallel tool calls concurrently and commits results in call order when the second finishes first', async () => {
    const secondStarted = deferred<void>();
    const finished: string[] = [];
    const slow = tool({
      name: 'slow_lookup',
      description: 'Waits until the fast lookup has started.',
      parameters: z.object({}),
      execute: async () => {
        await within(secondStarted.promise, 2_000, 'the second tool call starting while the first runs');
        finished.push('slow');
        return 'slow result';
      },
    });
    const fast = tool({
      name: 'fast_lookup',
      description: 'Answers at once.',
      parameters: z.object({}),
      execute: async () => {
        secondStarted.resolve();
        finished.push('fast');
        return 'fast result';
      },
    });
    const { executor, model } = executorWith(
      [
        {
          toolCalls: [
            { id: 'call_slow', name: 'slow_lookup' },
            { id: 'call_fast', name: 'fast_lookup' },
          ],
        },
        { text: 'Both done.' },
      ],
      [slow, fast],
    );
    const journal = await userSays('Look both up.');
    const { outcome, events } = await runExecutor(executor, journal);

    expect(finished).toEqual(['fast', 'slow']);
    expect(toolResults(events).map((e) => [e.toolCallId, e.content, e.isError])).toEqual([
      ['call_fast', 'fast result', false],
      ['call_slow', 'slow result', false],
    ]);
    expect(journal.recorded.map((w) => w.toolCallId)).toEqual(['call_fast', 'call_slow']);
    const tools = journal.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => [m.toolCallId, m.content])).toEqual([
      ['call_slow', 'slow result'],
      ['call_fast', 'fast result'],
    ]);
    expect(tools.map((m) => m.seq)).toEqual([3, 4]);
    expect(journal.commits).toEqual([1, 1, 2, 1]);
    expect(outcome.type === 'reply' && outcome.message.content).toBe('Both done.');
    expect(model.requests[1]?.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).toEqual([
      'call_slow',
      'call_fast',
    ]);
  });

  it('answers a call to an unknown tool with an error result and goes on', async () => {
    const { executor, model } = executorWith(
      [{ toolCalls: [{ id: 'call_x', name: 'cancel_order', arguments: {} }] }, { text: 'I cannot cancel orders.' }],
      [lookUpOrder()],
    );
    const { outcome, events } = await runExecutor(executor, await userSays('Cancel it.'));
    const [result] = toolResults(events);
    expect(result).toMatchObject({ toolCallId: 'call_x', isError: true });
    expect(result?.content).toBe('Error: there is no tool named "cancel_order". Available tools: look_up_order.');
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 'call_x',
      content: result?.content,
    });
    expect(outcome.type === 'reply' && outcome.message.content).toBe('I cannot cancel orders.');
  });

  it('answers arguments that fail the zod schema with an error result naming the field, without running the tool', async () => {
    const ran: string[] = [];
    const { executor } = executorWith(
      [
        { toolCalls: [{ id: 'call_1', name: 'look_up_order', arguments: { orderId: '1234' } }] },
        { text: 'Which order?' },
      ],
      [lookUpOrder(ran)],
    );
    const journal = await userSays('Order 1234?');
    const { outcome } = await runExecutor(executor, journal);
    expect(ran).toEqual([]);
    const result = journal.messages.find((m) => m.role === 'tool');
    expect(result?.isError).toBe(true);
    expect(result?.content).toBe(
      'Error: invalid arguments for look_up_order: orderId: use the form A-123. Call it again with valid arguments.',
    );
    expect(outcome.type).toBe('reply');
  });

  it('validates with async zod refinements, and answers a refinement that throws with an error result', async () => {
    const ran: string[] = [];
    const known = tool({
      name: 'look_up_known_order',
      description: 'Finds an order that exists.',
      parameters: z.object({ orderId: z.string().refine(async (id) => id === 'A-1', 'no such order') }),
      execute: ({ orderId }) => {
        ran.push(orderId);
        return 'found';
      },
    });
    const fragile = tool({
      name: 'fragile',
      description: 'Its schema throws.',
      parameters: z.object({
        x: z.string().refine(() => {
          throw new Error('validator down');
        }),
      }),
      execute: () => 'never',
    });
    const { executor } = executorWith(
      [
        {
          toolCalls: [
            { id: 'call_1', name: 'look_up_known_order', arguments: { orderId: 'Z-9' } },
            { id: 'call_2', name: 'look_up_known_order', arguments: { orderId: 'A-1' } },
            { id: 'call_3', name: 'fragile', arguments: { x: 'y' } },
          ],
        },
        { text: 'Done.' },
      ],
      [known, fragile],
    );
    const journal = await userSays('Z-9 and A-1?');
    const { outcome } = await runExecutor(executor, journal);
    expect(ran).toEqual(['A-1']);
    expect(journal.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.isError, m.content])).toEqual([
      [
        'call_1',
        true,
        'Error: invalid arguments for look_up_known_order: orderId: no such order. Call it again with valid arguments.',
      ],
      ['call_2', false, 'found'],
      ['call_3', true, 'Error: the arguments of fragile could not be validated: validator down'],
    ]);
    expect(outcome.type).toBe('reply');
  });

  it('answers a tool that throws with an error result and goes on', async () => {
    const explode = tool({
      name: 'charge_card',
      description: 'Charges a card.',
      parameters: z.object({ cents: z.number() }),
      execute: () => {
        throw new Error('card declined');
      },
    });
    const { executor } = executorWith(
      [
        { toolCalls: [{ id: 'call_1', name: 'charge_card', arguments: { cents: 500 } }] },
        { text: 'The card was declined.' },
      ],
      [explode],
    );
    const journal = await userSays('Charge me.');
    const { outcome, events } = await runExecutor(executor, journal);
    expect(toolResults(events)[0]).toMatchObject({
      isError: true,
      content: 'Error: charge_card failed: card declined',
    });
    expect(outcome.type === 'reply' && outcome.message.content).toBe('The card was declined.');
  });

  it('throws MaxStepsExceededError after maxSteps model calls without a final answer', async () => {
    const model = new ScriptedModel(() => ({ toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'A-1' } }] }));
    const executor = new AgentExecutor(
      agent({
        name: 'loopy',
        description: 'Loops.',
        instructions: 'Loop.',
        tools: [lookUpOrder()],
        model,
        maxSteps: 3,
      }),
    );
    const error = await runExecutor(executor, await userSays('Go.')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaxStepsExceededError);
    expect((error as Error).message).toContain('"loopy" made 3 model calls');
    expect(model.requests).toHaveLength(3);
  });

  it('throws AbortedError and calls no model when the signal is already aborted', async () => {
    const { executor, model } = executorWith([{ text: 'never' }]);
    const error = await runExecutor(executor, await userSays('Hi'), { signal: AbortSignal.abort() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AbortedError);
    expect(model.requests).toHaveLength(0);
  });

  it('throws AbortedError when cancelled while the model streams, committing no partial answer', async () => {
    const { executor } = executorWith([{ text: 'A long answer that will be cut off part way.' }]);
    const journal = await userSays('Tell me everything.');
    const controller = new AbortController();
    const deltas: string[] = [];
    const run = async () => {
      const generator = executor.execute({
        sessionId: 'session-1',
        branchId: 'main',
        turn: 1,
        history: [...journal.messages],
        journal,
        state: new StateContainer({ session: {}, branch: {} }),
        signal: controller.signal,
      });
      for await (const event of generator) {
        if (event.type === 'message.delta') {
          deltas.push(event.delta);
          controller.abort();
        }
      }
    };
    await expect(run()).rejects.toBeInstanceOf(AbortedError);
    expect(deltas).toHaveLength(1);
    expect(journal.messages.map((m) => m.role)).toEqual(['user']);
  });
});
