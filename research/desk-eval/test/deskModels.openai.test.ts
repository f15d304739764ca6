import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BatonEvent, InMemoryStore } from '@baton/core';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { createDeskAgents } from '@baton/example-support-desk/desk/deskAgents.js';
import { createOpenAIModels } from '@baton/example-support-desk/desk/deskModels.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { buildDeskWorkflow } from '@baton/example-support-desk/desk/deskWorkflow.js';
import { WorldDirectory } from '@baton/example-support-desk/tools/world.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReplay } from '../src/runReplay.js';

// A real HTTP server on loopback speaking the Chat Completions streaming wire format: each request
// takes the next scripted answer. The desk's agents run on OpenAIChatModel against it unchanged.
type Answer = { text: string } | { tool: string; args: Record<string, unknown> };
const script: Answer[] = [
  { tool: 'handoff_to_returns', args: { reason: 'flow product_defect' } },
  { tool: 'request_user_input', args: { prompt: 'May I have your full name or account ID?' } },
  { tool: 'pull-up-account', args: { customer_name: 'Joyce Wu' } },
  { text: 'I have pulled up your account, Joyce.' },
];
// biome-ignore lint/suspicious/noExplicitAny: the wire bodies are read as JSON
const received: any[] = [];
let server: Server;
let baseURL: string;

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'desk-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (part) => {
      body += part;
    });
    req.on('end', () => {
      const parsed = JSON.parse(body);
      if (parsed.model === 'unauthorized') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided: sk-wrong.',
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          }),
        );
        return;
      }
      received.push(parsed);
      const answer = script[received.length - 1] ?? { text: 'Out of script.' };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: '' }));
      if ('text' in answer) {
        for (const word of answer.text.split(/(?<= )/)) res.write(chunk({ content: word }));
        res.write(chunk({}, 'stop'));
      } else {
        res.write(
          chunk({
            tool_calls: [
              {
                index: 0,
                id: `call_${received.length}`,
                type: 'function',
                function: { name: answer.tool, arguments: JSON.stringify(answer.args) },
              },
            ],
          }),
        );
        res.write(chunk({}, 'tool_calls'));
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('the desk on OpenAI models', () => {
  it('runs the same agents over the Chat Completions wire format, tools and handoffs included', async () => {
    const ontology = loadOntology();
    const models = await createOpenAIModels({ model: 'desk-test', apiKey: 'sk-test', baseURL });
    const agents = createDeskAgents(ontology, models, new WorldDirectory());
    const desk = buildDeskWorkflow({ agents, store: new InMemoryStore() });
    const session = await desk.session({ id: 'openai-1', userId: 'u-1' });
    const events: BatonEvent[] = [];
    for await (const event of session.send('My new jacket has a stain, I want to return it')) events.push(event);
    const [question] = session.pendingRequests;
    expect(question).toMatchObject({
      type: 'user_input',
      agent: 'returns',
      prompt: 'May I have your full name or account ID?',
    });
    for await (const event of session.respond(question!.id, 'Joyce Wu')) events.push(event);

    expect(events.find((e) => e.type === 'handoff')).toMatchObject({
      from: 'triage',
      to: 'returns',
      reason: 'flow product_defect',
    });
    expect(events.find((e) => e.type === 'tool.result' && e.toolName === 'pull-up-account')).toMatchObject({
      isError: false,
      content: expect.stringContaining('Account has been pulled up for Joyce Wu.'),
    });
    const reply = events
      .filter((e) => e.type === 'message.delta' && e.agent === 'returns')
      .map((e) => (e.type === 'message.delta' ? e.delta : ''))
      .join('');
    expect(reply).toBe('I have pulled up your account, Joyce.');

    expect(received).toHaveLength(4);
    expect(received.every((body) => body.model === 'desk-test' && body.stream === true)).toBe(true);
    // biome-ignore lint/suspicious/noExplicitAny: wire tool definitions
    const toolsOf = (body: any) => body.tools.map((t: any) => t.function.name);
    expect(toolsOf(received[0])).toEqual(
      expect.arrayContaining(['handoff_to_account', 'handoff_to_returns', 'handoff_to_products', 'request_user_input']),
    );
    expect(toolsOf(received[1])).toEqual(
      expect.arrayContaining(['pull-up-account', 'validate-purchase', 'offer-refund', 'handoff_to_triage']),
    );
    // biome-ignore lint/suspicious/noExplicitAny: wire tool definitions
    const pullUp = received[1].tools.find((t: any) => t.function.name === 'pull-up-account').function;
    expect(Object.keys(pullUp.parameters.properties)).toEqual(['customer_name', 'account_id']);
    expect(received[0].messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('triage coordinator'),
    });
    expect(received[1].messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('returns specialist'),
    });
    // The customer's answer reaches the model as the result of its request_user_input call.
    // biome-ignore lint/suspicious/noExplicitAny: wire messages
    expect(received[2].messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'call_2')).toMatchObject({
      content: 'Joyce Wu',
    });
  });

  it('records a conversation whose model call fails as failed, closes it, and goes on with the next', async () => {
    const models = await createOpenAIModels({ model: 'unauthorized', apiKey: 'sk-wrong', baseURL });
    const conversation = (id: string) => ({
      id,
      flow: 'order_issue',
      subflow: 'manage_cancel',
      turns: [{ role: 'customer' as const, text: 'Cancel my order please' }],
    });
    const deskStore = chooseDeskStore({ directory: ':memory:' });
    const report = await runReplay({
      conversations: [conversation('x-1'), conversation('x-2')],
      ontology: loadOntology(),
      deskStore,
      models,
    });
    expect(report.counts.failed).toBe(2);
    expect(report.conversations.map((o) => o.failure)).toEqual([
      expect.stringMatching(/^AuthenticationError: .*Incorrect API key/),
      expect.stringMatching(/^AuthenticationError/),
    ]);
    const store = await deskStore.open();
    expect(await store.getSession('x-2')).toMatchObject({ status: 'closed', closedReason: 'replay: a turn failed' });
  });
});
