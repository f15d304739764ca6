/**
 * The support desk itself (its workflow, offline models, a FileStore in a temp dir) as an AG-UI agent
 * at `/ag-ui` of the desk's web server, rendered by `@ag-ui/client`'s `HttpAgent` over 127.0.0.1:
 * text, tool calls, the state as a snapshot then JSON Patch deltas that apply cleanly, and the
 * refund's approval as an interrupt resumed by the next run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BaseEvent, EventType, HttpAgent, type Message } from '@ag-ui/client';
import jsonPatch from 'fast-json-patch';
import { afterEach, describe, expect, it } from 'vitest';
import { CRYSTAL, serveDesk } from './support/servedDesk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs the agent and records every event it applied. */
async function run(agent: HttpAgent, parameters: Parameters<HttpAgent['runAgent']>[0] = {}) {
  const events: BaseEvent[] = [];
  await agent.runAgent(parameters, { onEvent: ({ event }) => void events.push(event) });
  return events;
}

/** The state a run's STATE_SNAPSHOT and STATE_DELTAs make, each delta applied with validation (a bad one throws). */
function replayState(events: readonly BaseEvent[]): unknown {
  let state: unknown;
  for (const event of events) {
    if (event.type === EventType.STATE_SNAPSHOT) state = jsonPatch.deepClone(event.snapshot);
    if (event.type === EventType.STATE_DELTA)
      state = jsonPatch.applyPatch(state, event.delta as jsonPatch.Operation[], true, false).newDocument;
  }
  return state;
}

const textsOf = (messages: readonly Message[]) =>
  messages
    .filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content !== '')
    .map((m) => m.content);
const callsOf = (messages: readonly Message[]) =>
  messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.function.name) : []));

describe('the support desk over AG-UI (@ag-ui/client HttpAgent, /ag-ui on the web server)', () => {
  it('renders desk turns from the events and resumes the refund approval interrupt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'desk-agui-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const served = await serveDesk(dir);
    cleanups.push(() => served.close());
    const agent = new HttpAgent({
      url: `${served.url}/ag-ui`,
      threadId: 'agui-crystal',
      headers: { authorization: 'Bearer crystal' },
    });

    const scope = { tenantId: 'acme-web' }; // demoAuthenticate: "Bearer crystal" is user crystal of tenant acme-web
    const stored = async () => ({
      session: (await served.desk.store.getSession('agui-crystal', scope))?.state,
      branch: (await served.desk.store.getBranch('agui-crystal', 'main', scope))?.state,
    });
    /** A run: a snapshot first, then deltas that apply cleanly to it and end at the state the client holds. */
    const expectCleanState = (events: readonly BaseEvent[]) => {
      expect(events.map((e) => e.type).slice(0, 2)).toEqual([EventType.RUN_STARTED, EventType.STATE_SNAPSHOT]);
      expect(events.filter((e) => e.type === EventType.STATE_SNAPSHOT)).toHaveLength(1);
      expect(events.filter((e) => e.type === EventType.STATE_DELTA).length).toBeGreaterThan(0);
      const replayed = replayState(events) as Record<string, unknown>;
      expect(replayed).toEqual(agent.state);
      return replayed;
    };
    const snapshotOf = (events: readonly BaseEvent[]) =>
      events.flatMap((e) => (e.type === EventType.STATE_SNAPSHOT ? [e.snapshot as unknown] : []))[0];
    const deltaPaths = (events: readonly BaseEvent[]) =>
      events.flatMap((e) =>
        e.type === EventType.STATE_DELTA ? (e.delta as { path: string }[]).map((op) => op.path) : [],
      );

    // Run 1: triage hands off to account, whose console actions run as tool calls; it ends asking how much.
    agent.addMessage({ id: 'u-1', role: 'user', content: CRYSTAL.complaint });
    const first = await run(agent);
    expect(first.filter((e) => e.type === EventType.STEP_STARTED).map((e) => e.stepName)).toEqual([
      'triage',
      'account',
    ]);
    expect(first.find((e) => e.type === EventType.CUSTOM)).toMatchObject({
      name: 'baton.handoff',
      value: { from: 'triage', to: 'account' },
    });
    expect(callsOf(agent.messages)).toEqual([
      'handoff_to_account',
      'pull-up-account',
      'record-reason',
      'ask-the-oracle',
      'update-account',
      'request_user_input',
    ]);
    const pulledUp = agent.messages.find((m) => m.role === 'tool' && String(m.content).includes('pulled up'));
    expect(JSON.parse(String(pulledUp?.content))).toMatchObject({ customerName: 'Crystal Minh' });
    let state = expectCleanState(first);
    expect(state).toMatchObject({
      activeAgent: 'account',
      routingState: 'awaitingRequest',
      session: {
        customerName: 'Crystal Minh',
        actions: ['pull-up-account', 'record-reason', 'ask-the-oracle', 'update-account'],
      },
    });
    expect(deltaPaths(first).some((path) => path.startsWith('/session/'))).toBe(true); // the tools' state changes
    const [question] = agent.pendingInterrupts;
    expect(question).toMatchObject({
      reason: 'user_input',
      message: 'How much were you charged (the amount in dollars)?',
    });

    // Run 2 resumes the question with the amount: the refund waits for approval, an interrupt.
    const second = await run(agent, {
      resume: [{ interruptId: question!.id, status: 'resolved', payload: { text: CRYSTAL.amount } }],
    });
    // Each run starts from a snapshot equal to where the last run's deltas ended.
    expect(snapshotOf(second)).toEqual(state);
    state = expectCleanState(second);
    expect(agent.pendingInterrupts).toHaveLength(1);
    const [approval] = agent.pendingInterrupts;
    expect(approval).toMatchObject({
      reason: 'tool_approval',
      metadata: { agent: 'account', toolName: 'offer-refund', arguments: '{"amount":"40"}' },
    });
    expect(second.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt' } });

    // Run 3 resumes the approval: the refund runs, the answer streams as text, the refund arrives as a delta.
    const third = await run(agent, {
      resume: [{ interruptId: approval!.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(third.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } });
    expect(agent.pendingInterrupts).toEqual([]);
    expect(third.filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT).length).toBeGreaterThan(2); // streamed
    expect(textsOf(agent.messages)).toEqual([
      'I have pulled up your account, updated your account and refunded $40. (case status_service_added) Is there anything else I can help you with?',
    ]);
    const refund = agent.messages.find((m) => m.role === 'tool' && m.toolCallId === approval!.toolCallId);
    expect(String(refund?.content)).toContain('A refund has been made for the amount of $40');
    expect(callsOf(agent.messages).filter((name) => name === 'offer-refund')).toHaveLength(1);
    expect(snapshotOf(third)).toEqual(state);
    state = expectCleanState(third);
    // The turn settled: the state the deltas built is the store's.
    expect({ session: state.session, branch: state.branch }).toEqual(await stored());
    expect(state).toMatchObject({
      routingState: 'idle',
      pendingRequests: [],
      session: { refunds: [{ amount: 40 }] },
    });
    expect(deltaPaths(third).some((path) => path.startsWith('/session/refunds'))).toBe(true);
  }, 120_000);
});
