import { type BaseEvent, EventType, HttpAgent, type Message } from '@ag-ui/client';
import { InMemoryStore } from '@baton/core';
import jsonPatch from 'fast-json-patch';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { aguiRoutes } from '../src/agui/index.js';
import { createBatonApp } from '../src/index.js';
import { type ServedBaton, serveBaton } from '../src/node.js';
import { TOKENS } from './support/httpClient.js';
import { serverDesk } from './support/serverDesk.js';
import { stateDesk } from './support/stateDesk.js';

const ANN = 'Bearer acme-ann';
let server: ServedBaton | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The REST API at `/` and the AG-UI endpoint at `/ag-ui`, as a user mounts them, on 127.0.0.1. */
async function start(desk: typeof stateDesk = stateDesk) {
  const store = new InMemoryStore();
  const { workflow, refunds } = desk(store);
  const authenticate = (request: Request) => TOKENS[request.headers.get('authorization') ?? ''];
  const app = new Hono();
  app.route('/ag-ui', aguiRoutes({ workflow, authenticate }));
  app.route('/', createBatonApp({ workflow, authenticate }));
  server = await serveBaton(app);
  return { url: server.url, store, refunds };
}

/** Runs the agent and records every event it applied. */
async function run(agent: HttpAgent, parameters: Parameters<HttpAgent['runAgent']>[0] = {}) {
  const events: BaseEvent[] = [];
  const result = await agent.runAgent(parameters, { onEvent: ({ event }) => void events.push(event) });
  return { events, result };
}

/** The state the run's STATE_SNAPSHOT and STATE_DELTAs make, each delta applied with validation (a bad one throws). */
function replayState(events: readonly BaseEvent[]): unknown {
  let state: unknown;
  for (const event of events) {
    if (event.type === EventType.STATE_SNAPSHOT) state = jsonPatch.deepClone(event.snapshot);
    if (event.type === EventType.STATE_DELTA)
      state = jsonPatch.applyPatch(state, event.delta as jsonPatch.Operation[], true, false).newDocument;
  }
  return state;
}

const errorOf = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message;
const textOf = (messages: readonly Message[]) =>
  messages
    .filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content !== '')
    .map((m) => m.content);
const callsOf = (messages: readonly Message[]) =>
  messages.flatMap((m) =>
    m.role === 'assistant'
      ? (m.toolCalls ?? []).map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) }))
      : [],
  );

describe('the AG-UI endpoint (aguiRoutes), driven by @ag-ui/client HttpAgent over HTTP', () => {
  it('renders a turn from the events: handoff step, streamed text, tool calls and results, state deltas that apply to the snapshot, an approval interrupt', async () => {
    const { url, store } = await start();
    const agent = new HttpAgent({ url: `${url}/ag-ui`, threadId: 'ag-1', headers: { authorization: ANN } });
    agent.addMessage({ id: 'u-1', role: 'user', content: 'I was charged twice for order 1234' });
    const { events } = await run(agent);

    const types = events.map((e) => e.type);
    expect(types[0]).toBe(EventType.RUN_STARTED);
    expect(types[1]).toBe(EventType.STATE_SNAPSHOT);
    expect(types.at(-1)).toBe(EventType.RUN_FINISHED);
    expect(events.filter((e) => e.type === EventType.STEP_STARTED).map((e) => e.stepName)).toEqual([
      'triage',
      'billing',
    ]);
    expect(events.find((e) => e.type === EventType.CUSTOM)).toMatchObject({
      name: 'baton.handoff',
      value: { from: 'triage', to: 'billing', reason: 'a refund' },
    });
    expect(types.filter((t) => t === EventType.TEXT_MESSAGE_CONTENT).length).toBeGreaterThan(2); // streamed in pieces

    // What the client rendered from the events.
    expect(textOf(agent.messages)).toEqual(['Let me look that up.', 'I can refund 40 EUR.']);
    expect(callsOf(agent.messages)).toEqual([
      { name: 'handoff_to_billing', arguments: { reason: 'a refund' } },
      { name: 'lookup_order', arguments: { orderId: '1234' } },
      { name: 'refund', arguments: { orderId: '1234', amount: 40 } },
    ]);
    const results = agent.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toEqual(['Transferred to billing.', 'Order 1234: 40 EUR, charged twice.']);

    // The state: the snapshot, then deltas that apply cleanly, ending where the client's state is.
    const replayed = replayState(events) as {
      branch: unknown;
      activeAgent: string;
      routingState: string;
      pendingRequests: { type: string; toolName: string }[];
    };
    expect(replayed).toEqual(agent.state);
    expect(replayed.branch).toEqual({ order: { id: '1234', amount: 40, status: 'charged twice' } });
    expect(replayed).toMatchObject({
      activeAgent: 'billing',
      routingState: 'awaitingRequest',
      pendingRequests: [{ type: 'tool_approval', toolName: 'refund' }],
    });
    const deltaPaths = events.flatMap((e) =>
      e.type === EventType.STATE_DELTA ? (e.delta as { path: string }[]).map((op) => op.path) : [],
    );
    expect(deltaPaths).toContain('/branch/order'); // from the immer patch the lookup tool's change was recorded as
    // The change arrives as the run goes (once the lookup's result is committed), not only at the end.
    const orderDelta = events.findIndex(
      (e) =>
        e.type === EventType.STATE_DELTA && (e.delta as { path: string }[]).some((op) => op.path === '/branch/order'),
    );
    const refundCall = events.findIndex((e) => e.type === EventType.TOOL_CALL_START && e.toolCallName === 'refund');
    expect(orderDelta).toBeGreaterThan(-1);
    expect(orderDelta).toBeLessThan(refundCall);
    expect(
      deltaPaths.every((path) => /^\/(activeAgent|routingState|pendingRequests|session|branch)(\/|$)/.test(path)),
    ).toBe(true);
    expect(events.some((e) => e.type === EventType.STATE_DELTA && JSON.stringify(e.delta).includes('"running"'))).toBe(
      true,
    );

    // The run ended on the approval, as an interrupt.
    expect(agent.pendingInterrupts).toHaveLength(1);
    const [interrupt] = agent.pendingInterrupts;
    const [request] = (await store.loadCheckpoint('ag-1', 'main', undefined, { tenantId: 'acme' }))!.pendingRequests;
    expect(interrupt).toMatchObject({
      id: request!.id,
      reason: 'tool_approval',
      toolCallId: request!.type === 'tool_approval' ? request!.toolCallId : '',
      metadata: { agent: 'billing', toolName: 'refund' },
    });
    expect(interrupt!.message).toContain('billing asks to call refund');
  });

  it('resumes the approval interrupt with the next run: the tool runs, its state change arrives as a delta, the run succeeds', async () => {
    const { url, store, refunds } = await start();
    const agent = new HttpAgent({ url: `${url}/ag-ui`, threadId: 'ag-2', headers: { authorization: ANN } });
    agent.addMessage({ id: 'u-1', role: 'user', content: 'I was charged twice for order 5678' });
    await run(agent);
    const [interrupt] = agent.pendingInterrupts;
    expect(refunds).toEqual([]);

    const { events } = await run(agent, {
      resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true, always: 'session' } }],
    });
    expect(refunds).toEqual(['5678:40']);
    expect(agent.pendingInterrupts).toEqual([]);
    const finished = events.at(-1) as { type: string; outcome?: { type: string } };
    expect(finished).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } });
    expect(textOf(agent.messages).at(-1)).toBe('All done. Refunded 40 EUR for order 5678.');
    const refundResult = agent.messages.find((m) => m.role === 'tool' && m.toolCallId === interrupt!.toolCallId);
    expect(refundResult?.content).toBe('Refunded 40 EUR for order 5678.');
    // The approved call was announced once (by the run that paused on it): its arguments are not repeated.
    expect(callsOf(agent.messages).filter((c) => c.name === 'refund')).toEqual([
      { name: 'refund', arguments: { orderId: '5678', amount: 40 } },
    ]);

    // This run's snapshot and deltas end at the state the store holds now (the standing approval included).
    const replayed = replayState(events) as {
      branch: unknown;
      session: Record<string, unknown>;
      routingState: string;
      pendingRequests: unknown[];
    };
    expect(replayed).toEqual(agent.state);
    const branch = await store.getBranch('ag-2', 'main', { tenantId: 'acme' });
    const session = await store.getSession('ag-2', { tenantId: 'acme' });
    expect(replayed.branch).toEqual(branch!.state);
    expect(replayed.branch).toEqual({
      order: { id: '5678', amount: 40, status: 'refunded' },
      refunds: [{ orderId: '5678', amount: 40 }],
    });
    expect(replayed.session).toEqual(session!.state);
    expect(JSON.stringify(replayed.session)).toContain('refund');
    expect(replayed).toMatchObject({ routingState: 'idle', pendingRequests: [] });

    // The thread is the Baton session: the REST API sees the same conversation.
    const rest = await fetch(`${url}/sessions/ag-2`, { headers: { authorization: ANN } });
    expect(await rest.json()).toMatchObject({
      id: 'ag-2',
      routingState: 'idle',
      approvalGrants: [{ toolName: 'refund' }],
    });
  });

  it('resumes a question with its answer, then a cancelled approval rejects the call', async () => {
    const { url, refunds } = await start(serverDesk);
    const agent = new HttpAgent({ url: `${url}/ag-ui`, threadId: 'ag-q', headers: { authorization: ANN } });
    agent.addMessage({ id: 'u-1', role: 'user', content: 'I was charged twice' });
    await run(agent);
    const [question] = agent.pendingInterrupts;
    expect(question).toMatchObject({ reason: 'user_input', message: 'What is your order number?' });
    expect(question!.responseSchema).toMatchObject({ required: ['text'] });

    await run(agent, { resume: [{ interruptId: question!.id, status: 'resolved', payload: { text: '9876' } }] });
    const [approval] = agent.pendingInterrupts;
    expect(approval).toMatchObject({ reason: 'tool_approval', metadata: { toolName: 'refund' } });
    expect(JSON.parse(String(approval!.metadata!.arguments))).toEqual({ orderId: '9876', amount: 40 });

    const { events } = await run(agent, { resume: [{ interruptId: approval!.id, status: 'cancelled' }] });
    expect(refunds).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } });
    const rejected = agent.messages.find((m) => m.role === 'tool' && m.toolCallId === approval!.toolCallId);
    expect(String(rejected?.content)).toContain('cancelled');
    expect(agent.state).toMatchObject({ routingState: 'idle', pendingRequests: [] });
  });

  it("answers a client's mistakes with 4xx before any event, naming the fix", async () => {
    const { url } = await start();
    const post = (body: unknown, token = ANN) =>
      fetch(`${url}/ag-ui`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body),
      });
    const input = (extra: Record<string, unknown>) => ({
      threadId: 'ag-3',
      runId: 'r-1',
      messages: [],
      tools: [],
      context: [],
      ...extra,
    });

    expect((await post(input({}), 'Bearer nobody')).status).toBe(401);
    const notInput = await post({ threadId: 'ag-3' });
    expect(notInput.status).toBe(400);
    expect(await errorOf(notInput)).toContain('runId');
    const noUser = await post(input({ messages: [{ id: 'a', role: 'assistant', content: 'hi' }] }));
    expect(noUser.status).toBe(400);
    expect(await errorOf(noUser)).toContain("must end with the user's message");

    const first = await post(input({ messages: [{ id: 'u', role: 'user', content: 'refund order 4321' }] }));
    const body = await first.text();
    expect(body).toContain('"outcome":{"type":"interrupt"');
    const interruptId = /"interrupts":\[\{"id":"([^"]+)"/.exec(body)![1]!;

    const message = await post(input({ runId: 'r-2', messages: [{ id: 'u2', role: 'user', content: 'hello?' }] }));
    expect(message.status).toBe(400);
    expect(await errorOf(message)).toContain(
      `paused on interrupts a new message cannot answer: "${interruptId}" (tool_approval)`,
    );
    const unknown = await post(
      input({ runId: 'r-3', resume: [{ interruptId: 'nope', status: 'resolved', payload: { approved: true } }] }),
    );
    expect(unknown.status).toBe(400);
    expect(await errorOf(unknown)).toContain(`open: "${interruptId}"`);
    const badPayload = await post(
      input({ runId: 'r-4', resume: [{ interruptId, status: 'resolved', payload: { approve: 'yes' } }] }),
    );
    expect(badPayload.status).toBe(400);
    expect(await errorOf(badPayload)).toContain('{ "approved": true } or { "approved": false');

    const otherUser = await post(
      input({ runId: 'r-5', messages: [{ id: 'u', role: 'user', content: 'hi' }] }),
      'Bearer acme-bob',
    );
    expect(otherUser.status).toBe(404);

    await fetch(`${url}/sessions/ag-3/close`, {
      method: 'POST',
      headers: { authorization: ANN, 'content-type': 'application/json' },
      body: '{}',
    });
    const closed = await post(input({ runId: 'r-6', messages: [{ id: 'u', role: 'user', content: 'hi' }] }));
    expect(closed.status).toBe(410);
    expect(await errorOf(closed)).toContain('start a new thread');
  });
});
