/**
 * A per-turn `toolChoice` (`session.send(text, { modelSettings })`) on llama-cpp-python: the forced
 * choice makes SmolLM2-135M call the tool (without a tool_choice this server answers in text), and
 * once it has, the agent's next call is no longer forced, so it answers instead of calling the tool
 * until `maxSteps`. Asserts the events Baton makes of it, never the wording.
 */
import { agent, type BatonEvent, tool } from '@baton/core';
import { OpenAIChatModel } from '@baton/core/openai';
import { HandoffBuilder } from '@baton/handoff';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { llamaTestServer } from '../support/llamaTestServer.js';

const server = llamaTestServer();

it('a forced tool call per turn: the agent calls the tool once, then answers in text', async () => {
  const looked: string[] = [];
  const shipping = agent({
    name: 'shipping',
    description: 'Tracks orders.',
    instructions: 'Help the customer with their order in one short sentence.',
    // llama-cpp-python reads `max_tokens`, not Baton's `max_completion_tokens`.
    model: new OpenAIChatModel({
      model: server.model,
      baseURL: server.baseURL,
      apiKey: 'sk-local',
      temperature: 0,
      maxRetries: 0,
      extraBody: { max_tokens: 32 },
    }),
    maxSteps: 4,
    tools: [
      tool({
        name: 'look_up_order',
        description: 'Finds an order by its id.',
        parameters: z.object({ orderId: z.string() }),
        execute: ({ orderId }) => {
          looked.push(orderId);
          return 'Shipped on Monday.';
        },
      }),
    ],
  });
  const desk = new HandoffBuilder({ name: 'desk' }).participants(shipping).coordinator(shipping).build();
  const session = await desk.session({ id: 'llama-tool-choice', userId: 'u-1' });

  const events: BatonEvent[] = [];
  const turn = session.send('Where is my order A-17?', {
    modelSettings: { toolChoice: { name: 'look_up_order' } },
  });
  for await (const event of turn) events.push(event);

  expect(events.filter((e) => e.type === 'error')).toEqual([]);
  const calls = events.flatMap((e) => (e.type === 'tool.call' ? [e.toolCall.name] : []));
  expect(calls).toEqual(['look_up_order']);
  expect(looked).toHaveLength(1);
  const finished = events.flatMap((e) => (e.type === 'model.completed' ? [[e.agent, e.finishReason]] : []));
  expect(finished).toEqual([
    ['shipping', 'tool_calls'],
    ['shipping', expect.stringMatching(/^(stop|length)$/)],
  ]);
  expect(events.find((e) => e.type === 'turn.completed')).toMatchObject({ usage: { requests: 2 } });
  const last = session.messages.at(-1);
  expect(last).toMatchObject({ role: 'assistant', agent: 'shipping' });
  expect(last?.toolCalls).toBeUndefined();
});
