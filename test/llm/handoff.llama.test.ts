/**
 * A Baton handoff workflow driven by a real model's tool call: the coordinator runs on
 * llama-cpp-python with `toolChoice` naming the handoff tool, so SmolLM2-135M must call
 * `handoff_to_billing` (the server constrains its output to the tool's JSON schema); billing then
 * answers in text. Asserts the events and messages Baton makes of it, never the wording.
 */
import { agent, type BatonEvent, type ToolChoice } from '@baton/core';
import { OpenAIChatModel } from '@baton/core/openai';
import { HandoffBuilder, handoffToolName } from '@baton/handoff';
import { expect, it } from 'vitest';
import { llamaTestServer } from '../support/llamaTestServer.js';

const server = llamaTestServer();

/** A chat model on the server; llama-cpp-python reads `max_tokens`, not Baton's `max_completion_tokens`. */
function chatModel(maxTokens: number, toolChoice?: ToolChoice): OpenAIChatModel {
  return new OpenAIChatModel({
    model: server.model,
    baseURL: server.baseURL,
    apiKey: 'sk-local',
    temperature: 0,
    maxRetries: 0,
    extraBody: { max_tokens: maxTokens },
    ...(toolChoice === undefined ? {} : { toolChoice }),
  });
}

it("hands off to billing on the model's forced handoff tool call, and billing answers", async () => {
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route the customer to the right specialist.',
    model: chatModel(48, { name: handoffToolName('billing') }),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds and double charges.',
    instructions: 'Help with billing in one short sentence.',
    model: chatModel(24),
  });
  const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).coordinator(triage).build();
  const session = await desk.session({ id: 'llama-handoff', userId: 'u-1' });

  const events: BatonEvent[] = [];
  for await (const event of session.send('I was charged twice for order 1234.')) events.push(event);

  expect(events.filter((e) => e.type === 'error')).toEqual([]);
  const calls = events.flatMap((e) => (e.type === 'tool.call' ? [e] : []));
  expect(calls.map((c) => c.toolCall.name)).toEqual([handoffToolName('billing')]);
  expect(events.find((e) => e.type === 'handoff')).toMatchObject({ from: 'triage', to: 'billing' });

  const finished = events.flatMap((e) => (e.type === 'model.completed' ? [e] : []));
  expect(finished.map((e) => [e.agent, e.finishReason])).toEqual([
    ['triage', 'tool_calls'],
    ['billing', expect.stringMatching(/^(stop|length)$/)],
  ]);
  // Usage: each model call is counted; llama-cpp-python streams no token counts (see the client test).
  // The coordinator takes the next customer turn again.
  const completed = events.find((e) => e.type === 'turn.completed');
  expect(completed).toMatchObject({ usage: { requests: 2 }, nextAgent: 'triage' });

  const last = session.messages.at(-1);
  expect(last).toMatchObject({ role: 'assistant', agent: 'billing' });
  const handoffCall = session.messages.find((m) => m.role === 'assistant' && m.agent === 'triage')?.toolCalls?.[0];
  expect(handoffCall?.name).toBe(handoffToolName('billing'));
  expect(() => JSON.parse(handoffCall?.arguments ?? '')).not.toThrow();
});
