import { AgentExecutor, type AgentOutput, agent, type ModelClient, OutputValidationError, tool } from '@baton/core';
import { OpenAIChatModel, OpenAIResponsesModel } from '@baton/core/openai';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { reply, startOpenAIServer } from './support/openaiServer.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

const Refund = z.object({
  orderId: z.string().regex(/^A-\d+$/),
  amountCents: z.number().int().positive(),
  reason: z.enum(['double_charge', 'damaged']),
});

function refundAgent(model: ModelClient) {
  return agent({
    name: 'billing',
    description: 'Refunds.',
    instructions: 'Decide the refund.',
    model,
    outputType: Refund,
    tools: [
      tool({
        name: 'look_up_order',
        description: 'Finds an order.',
        parameters: z.object({ orderId: z.string() }),
        execute: ({ orderId }) => ({ orderId, charged: 2 }),
      }),
    ],
  });
}

async function userSays(text: string): Promise<TestJournal> {
  const journal = new TestJournal();
  await journal.commit([{ role: 'user', content: text }]);
  return journal;
}

const VALID = '{"orderId":"A-1","amountCents":1299,"reason":"double_charge"}';

describe('structured output (agent outputType)', () => {
  it('returns the typed value on the outcome and the message event, after a tool call, and asks the model for the schema', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'A-1' } }] },
      { text: VALID },
    ]);
    const billing = refundAgent(model);
    expectTypeOf<AgentOutput<typeof billing>>().toEqualTypeOf<z.output<typeof Refund>>();
    const journal = await userSays('I was charged twice for A-1');
    const { outcome, events } = await runExecutor(new AgentExecutor(billing), journal);

    expect(outcome.type === 'reply' && outcome.structuredOutput).toEqual({
      orderId: 'A-1',
      amountCents: 1299,
      reason: 'double_charge',
    });
    const answer = events.findLast((e) => e.type === 'message');
    expect(answer?.type === 'message' && answer.structuredOutput).toEqual({
      orderId: 'A-1',
      amountCents: 1299,
      reason: 'double_charge',
    });
    expect(answer?.type === 'message' && answer.message.content).toBe(VALID);
    expect(model.requests.map((r) => r.outputSchema?.name)).toEqual(['billing_output', 'billing_output']);
    expect(model.requests[0]?.outputSchema?.schema).toMatchObject({
      type: 'object',
      required: ['orderId', 'amountCents', 'reason'],
    });
  });

  it('tells the model once what was wrong, stores only the valid answer, and gives its value', async () => {
    const model = new ScriptedModel([
      { text: '{"orderId":"A-1","amountCents":"lots","reason":"double_charge"}' },
      { text: VALID },
    ]);
    const journal = await userSays('refund A-1');
    const { outcome } = await runExecutor(new AgentExecutor(refundAgent(model)), journal);

    expect(outcome.type === 'reply' && outcome.structuredOutput).toMatchObject({ amountCents: 1299 });
    const retry = model.requests[1]!.messages;
    expect(retry.at(-2)).toMatchObject({
      role: 'assistant',
      content: '{"orderId":"A-1","amountCents":"lots","reason":"double_charge"}',
    });
    expect(retry.at(-1)?.role).toBe('user');
    expect(retry.at(-1)?.content).toMatch(/amountCents: Invalid input: expected number/);
    expect(journal.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'refund A-1'],
      ['assistant', VALID],
    ]);
  });

  it('fails with OutputValidationError after the retried answer is still invalid', async () => {
    const model = new ScriptedModel([
      { text: 'Sure, refunding now!' },
      { text: '{"orderId":"B-7","amountCents":5,"reason":"double_charge"}' },
    ]);
    const journal = await userSays('refund A-1');
    const failure = await runExecutor(new AgentExecutor(refundAgent(model)), journal).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(OutputValidationError);
    expect((failure as OutputValidationError).code).toBe('OUTPUT_VALIDATION');
    expect((failure as OutputValidationError).agent).toBe('billing');
    expect((failure as OutputValidationError).issues).toMatch(/orderId/);
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/not JSON/);
    expect(journal.messages).toHaveLength(1);
  });

  it('accepts an answer fenced as a json code block', async () => {
    const model = new ScriptedModel([{ text: `\`\`\`json\n${VALID}\n\`\`\`` }]);
    const { outcome } = await runExecutor(new AgentExecutor(refundAgent(model)), await userSays('refund'));
    expect(outcome.type === 'reply' && outcome.structuredOutput).toMatchObject({ orderId: 'A-1' });
  });
});

describe('structured output on the OpenAI wire formats', () => {
  it('Chat Completions: sends response_format json_schema, retries an invalid answer once, returns the typed value', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('{"orderId":"A-1"}'), reply.text(VALID));
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const { outcome } = await runExecutor(new AgentExecutor(refundAgent(model)), await userSays('refund A-1'));

    expect(outcome.type === 'reply' && outcome.structuredOutput).toEqual({
      orderId: 'A-1',
      amountCents: 1299,
      reason: 'double_charge',
    });
    const body = server.requests[0]!.body;
    expect(body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'billing_output', strict: false },
    });
    expect(body.response_format.json_schema.schema.properties.reason).toEqual({
      type: 'string',
      enum: ['double_charge', 'damaged'],
    });
    expect(server.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(server.requests[1]!.body.messages.at(-1).content).toMatch(/amountCents: Invalid input/);
  });

  it('Chat Completions: two invalid answers fail with OutputValidationError', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('no'), reply.text('still no'));
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const failure = await runExecutor(new AgentExecutor(refundAgent(model)), await userSays('refund A-1')).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OutputValidationError);
    expect(server.requests).toHaveLength(2);
  });

  it('Responses: sends text.format json_schema, retries an invalid answer once, returns the typed value', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('{"orderId":"A-1","amountCents":-3,"reason":"damaged"}'), reply.text(VALID));
    const model = new OpenAIResponsesModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const { outcome } = await runExecutor(new AgentExecutor(refundAgent(model)), await userSays('refund A-1'));

    expect(outcome.type === 'reply' && outcome.structuredOutput).toEqual({
      orderId: 'A-1',
      amountCents: 1299,
      reason: 'double_charge',
    });
    expect(server.requests[0]!.path).toBe('/v1/responses');
    expect(server.requests[0]!.body.text).toMatchObject({
      format: { type: 'json_schema', name: 'billing_output', strict: false },
    });
    expect(server.requests[1]!.body.input.at(-1)).toMatchObject({ type: 'message', role: 'user' });
  });

  it('Responses: two invalid answers fail with OutputValidationError', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('[]'), reply.text('{}'));
    const model = new OpenAIResponsesModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const failure = await runExecutor(new AgentExecutor(refundAgent(model)), await userSays('refund A-1')).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OutputValidationError);
    expect((failure as OutputValidationError).output).toBe('{}');
  });
});
