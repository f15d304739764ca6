import { createAnthropic } from '@ai-sdk/anthropic';
import { type BatonEvent, InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { scriptedLanguageModel } from '../../../packages/ai-sdk/test/support/mockModel.js';
import { type RecordedAnthropicRequest, startAnthropicServer } from '../../../test/support/anthropicServer.js';
import { loadOntology } from '../src/data/ontology.js';
import type { DeskModels } from '../src/desk/deskAgents.js';
import { createDeskAgents } from '../src/desk/deskAgents.js';
import { createAISDKModels } from '../src/desk/deskModels.js';
import { buildDeskWorkflow } from '../src/desk/deskWorkflow.js';
import { WorldDirectory } from '../src/tools/world.js';

/** The same four model answers as the OpenAI desk test: triage hands off, returns asks, looks the account up, answers. */
const script = [
  { tool: 'handoff_to_returns', args: { reason: 'flow product_defect' } },
  { tool: 'request_user_input', args: { prompt: 'May I have your full name or account ID?' } },
  { tool: 'pull-up-account', args: { customer_name: 'Joyce Wu' } },
  { text: 'I have pulled up your account, Joyce.' },
] as const;

/** Runs one desk conversation (a question to the customer in the middle) and returns its events. */
async function converse(models: DeskModels, id: string): Promise<BatonEvent[]> {
  const agents = createDeskAgents(loadOntology(), models, new WorldDirectory());
  const desk = buildDeskWorkflow({ agents, store: new InMemoryStore() });
  const session = await desk.session({ id, userId: 'u-1' });
  const events: BatonEvent[] = [];
  for await (const event of session.send('My new jacket has a stain, I want to return it')) events.push(event);
  const [question] = session.pendingRequests;
  expect(question).toMatchObject({
    type: 'user_input',
    agent: 'returns',
    prompt: 'May I have your full name or account ID?',
  });
  for await (const event of session.respond(question!.id, 'Joyce Wu')) events.push(event);
  return events;
}

function expectTheConversation(events: BatonEvent[]): void {
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
  expect(events.at(-1)).toMatchObject({ type: 'turn.completed' });
}

describe('the desk on @baton/ai-sdk', () => {
  it("runs one conversation end to end on the AI SDK's mock language model", async () => {
    const mock = scriptedLanguageModel((_call, index) => {
      const answer = script[index] ?? { text: 'Out of script.' };
      return 'text' in answer
        ? { text: answer.text }
        : { toolCalls: [{ id: `call_${index + 1}`, name: answer.tool, input: JSON.stringify(answer.args) }] };
    }, 'desk-mock');
    const events = await converse(await createAISDKModels(mock), 'aisdk-mock-1');
    expectTheConversation(events);
    expect(mock.doStreamCalls).toHaveLength(4);
    expect(mock.doStreamCalls[0]!.prompt[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('triage coordinator'),
    });
    expect(mock.doStreamCalls[1]!.tools?.map((t) => t.name)).toEqual(
      expect.arrayContaining(['pull-up-account', 'handoff_to_triage']),
    );
  });

  it('runs one conversation end to end on @ai-sdk/anthropic against a loopback Anthropic Messages server', async () => {
    await using server = await startAnthropicServer((_request: RecordedAnthropicRequest, index) => {
      const answer = script[index] ?? { text: 'Out of script.' };
      return 'text' in answer
        ? { text: answer.text }
        : { toolCalls: [{ id: `toolu_${index + 1}`, name: answer.tool, input: { ...answer.args } }] };
    });
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const events = await converse(
      await createAISDKModels(anthropic('claude-desk-test'), { maxRetries: 0 }),
      'aisdk-anthropic-1',
    );
    expectTheConversation(events);

    expect(server.requests).toHaveLength(4);
    expect(
      server.requests.every(
        (r) => r.path === '/v1/messages' && r.body.model === 'claude-desk-test' && r.body.stream === true,
      ),
    ).toBe(true);
    expect(server.requests[0]!.body.system[0].text).toContain('triage coordinator');
    // biome-ignore lint/suspicious/noExplicitAny: wire tool definitions
    expect(server.requests[1]!.body.tools.map((t: any) => t.name)).toEqual(
      expect.arrayContaining(['pull-up-account', 'validate-purchase', 'handoff_to_triage']),
    );
    // The customer's answer reaches the model as the tool_result of its request_user_input call.
    const third = server.requests[2]!.body.messages;
    // biome-ignore lint/suspicious/noExplicitAny: wire messages
    const results = third
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((c: any) => c.type === 'tool_result');
    expect(results).toContainEqual(expect.objectContaining({ tool_use_id: 'toolu_2', content: 'Joyce Wu' }));
  });
});
