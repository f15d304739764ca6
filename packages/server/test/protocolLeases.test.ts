import { HttpAgent } from '@ag-ui/client';
import { agent, InMemoryStore, type ModelClient, type ModelRequest, type ModelStreamEvent } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { aguiRoutes } from '../src/agui/index.js';
import { createBatonApp } from '../src/index.js';
import { mcpRoutes } from '../src/mcp/index.js';
import { type ServedBaton, serveBaton } from '../src/node.js';
import { client } from './support/httpClient.js';

/** Every model call counted; each waits until the test opens the gate (so a turn stays running). */
class GatedModels {
  calls = 0;
  #open: () => void = () => {};
  #gate: Promise<void> = Promise.resolve();
  constructor() {
    this.close();
  }
  close(): void {
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
  }
  open(): void {
    this.#open();
  }
  wrap(inner: ModelClient): ModelClient {
    const models = this;
    return {
      model: inner.model,
      async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
        models.calls++;
        await models.#gate;
        yield* inner.stream(request);
      },
    };
  }
}

let server: ServedBaton | undefined;
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of closing.splice(0).reverse()) await step();
  await server?.close();
  server = undefined;
});

/** REST at `/`, AG-UI at `/ag-ui`, MCP at `/mcp`, one workflow on one store, as a user mounts them (no auth). */
async function start() {
  const models = new GatedModels();
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route.',
    model: models.wrap(
      new ScriptedModel(() => ({ toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'a refund' } }] })),
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds.',
    instructions: 'Refund.',
    model: models.wrap(new ScriptedModel(() => ({ text: 'Refunded.' }))),
  });
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(new InMemoryStore())
    .build();
  const app = new Hono();
  app.route('/ag-ui', aguiRoutes({ workflow }));
  app.route('/mcp', mcpRoutes({ workflow }));
  app.route('/', createBatonApp({ workflow }));
  server = await serveBaton(app);
  return { url: server.url, models, rest: client(server.url, '') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `models` made `n` calls (the running turn reached its model). */
async function untilCalls(models: GatedModels, n: number): Promise<void> {
  for (const deadline = Date.now() + 10_000; models.calls < n && Date.now() < deadline; ) await sleep(10);
  expect(models.calls).toBe(n);
}

describe('AG-UI and MCP turns hold the branch lease as REST turns do (one process, one store)', () => {
  it('a REST send while an AG-UI run runs is 409 before any model call, and the session shows running; an AG-UI run while a REST turn runs is 409', async () => {
    const { url, models, rest } = await start();
    const runner = new HttpAgent({ url: `${url}/ag-ui`, threadId: 'ag-1' });
    runner.addMessage({ id: 'u-1', role: 'user', content: 'I was charged twice' });
    const run = runner.runAgent();
    await untilCalls(models, 1);
    expect((await rest.json('GET', '/sessions/ag-1')).body).toMatchObject({ running: true });
    const refused = await rest.json('POST', '/sessions/ag-1/messages', { text: 'and again' });
    expect(refused.status).toBe(409);
    expect(models.calls).toBe(1);
    models.open();
    await run;
    expect((await rest.json('GET', '/sessions/ag-1')).body).toMatchObject({ running: false });

    // The other way round: a REST turn runs, an AG-UI run on its thread is refused before it starts.
    models.close();
    const turn = rest.call('POST', '/sessions/ag-1/messages', { text: 'one more' }, { accept: 'application/json' });
    await untilCalls(models, 3);
    const agui = await fetch(`${url}/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        threadId: 'ag-1',
        runId: 'r-2',
        messages: [{ id: 'u-2', role: 'user', content: 'and again' }],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
      }),
    });
    expect(agui.status).toBe(409);
    expect(((await agui.json()) as { error: { code: string } }).error.code).toBe('CONCURRENCY');
    expect(models.calls).toBe(3);
    models.open();
    expect((await turn).status).toBe(200);
  });

  it('a REST send while an MCP tool call runs is 409 before any model call; an MCP call while a REST turn runs is a CONCURRENCY tool error', async () => {
    const { url, models, rest } = await start();
    models.open();
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    closing.push(() => mcp.close());
    const first = await mcp.callTool({ name: 'desk', arguments: { message: 'I was charged twice' } });
    const { sessionId } = first.structuredContent as { sessionId: string };
    const callsAfterFirst = models.calls;

    models.close();
    const call = mcp.callTool({ name: 'desk', arguments: { message: 'and the other order?' } });
    await untilCalls(models, callsAfterFirst + 1);
    expect((await rest.json('GET', `/sessions/${sessionId}`)).body).toMatchObject({ running: true });
    expect((await rest.json('POST', `/sessions/${sessionId}/messages`, { text: 'hello?' })).status).toBe(409);
    expect(models.calls).toBe(callsAfterFirst + 1);
    models.open();
    expect((await call).isError).toBeFalsy();

    models.close();
    const callsBefore = models.calls;
    const turn = rest.call(
      'POST',
      `/sessions/${sessionId}/messages`,
      { text: 'one more' },
      { accept: 'application/json' },
    );
    await untilCalls(models, callsBefore + 1);
    const refused = await mcp.callTool({ name: 'desk', arguments: { message: 'and again' } });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toMatch(/^CONCURRENCY: A turn is running/);
    expect(models.calls).toBe(callsBefore + 1);
    models.open();
    expect((await turn).status).toBe(200);
  });
});
