import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BatonEvent, FileStore, MAIN_BRANCH, type Message } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { type AbcdConversation, customerMessages, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayReport } from '../src/replayReport.js';
import { runReplay } from '../src/runReplay.js';

// demo-009 (manage_account / status_service_added): Crystal Minh is billed $40 for a service she
// never signed up for. Replayed offline, held out: the models learn from every other demo conversation.
const ID = 'demo-009';

let dir: string;
let conversation: AbcdConversation;
let report: ReplayReport;
const events: BatonEvent[] = [];
let messages: Message[];
let store: FileStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-e2e-'));
  const all = await loadConversations(DEMO_DATA_FILE);
  conversation = all.find((c) => c.id === ID)!;
  const others = all.filter((c) => c.id !== ID);
  report = await runReplay({
    conversations: [conversation],
    training: others,
    evaluation: 'held-out',
    ontology: loadOntology(),
    deskStore: chooseDeskStore({ directory: dir }),
    onEvent: (e) => events.push(e),
  });
  store = new FileStore({ directory: dir });
  messages = await store.readMessages(ID, MAIN_BRANCH);
});

afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe(`replaying ${ID} end to end`, () => {
  it('triage hands the customer to the account specialist, naming the flow', () => {
    const first = events.find((e) => e.type === 'handoff');
    expect(first).toMatchObject({
      type: 'handoff',
      from: 'triage',
      to: 'account',
      reason: expect.stringContaining('flow manage_account'),
    });
    expect(report.conversations[0]).toMatchObject({
      routedTo: 'account',
      predictedFlow: 'manage_account',
      finalFlow: 'manage_account',
      failure: null,
    });
  });

  it("asks the customer for the amount, and the customer's next message answers it", () => {
    const request = events.find((e) => e.type === 'request' && e.request.type === 'user_input');
    expect(request).toMatchObject({
      request: { agent: 'account', prompt: 'How much were you charged (the amount in dollars)?' },
    });
    const toolCallId =
      request?.type === 'request' && request.request.type === 'user_input' ? request.request.toolCallId : '';
    const answer = messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
    expect(answer?.content).toBe(customerMessages(conversation)[1]);
    expect(answer?.content).toContain('$40');
  });

  it('waits for a human to approve the refund, then refunds the amount the customer gave', () => {
    const approval = events.find((e) => e.type === 'request' && e.request.type === 'tool_approval');
    expect(approval).toMatchObject({
      request: { agent: 'account', toolName: 'offer-refund', arguments: '{"amount":"40"}' },
    });
    const refund = events.find((e) => e.type === 'tool.result' && e.toolName === 'offer-refund');
    expect(refund).toMatchObject({
      isError: false,
      content: expect.stringContaining('A refund has been made for the amount of $40.'),
    });
    expect(report.counts).toMatchObject({ approvalRequests: 1, approvals: 1, rejections: 0 });
  });

  it('stores every customer message once and leaves no tool call without its result', () => {
    const customerText = messages
      .filter((m) => m.role === 'user' || m.toolName === 'request_user_input')
      .map((m) => m.content);
    expect(customerText).toEqual(customerMessages(conversation));
    const calls = messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id);
    const results = messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
    expect(results.sort()).toEqual(calls.sort());
    expect(report.counts.messages).toBe(messages.length);
  });

  it("runs the case's whole action sequence, names the case, and closes with end_conversation when the customer says goodbye, saving the episode", async () => {
    expect(events.filter((e) => e.type === 'checkpoint').length).toBe(report.counts.checkpoints);
    expect(report.counts.checkpoints).toBeGreaterThan(0);
    expect(report.conversations[0]).toMatchObject({ predictedSubflow: 'status_service_added', closedByDesk: true });
    expect(report.conversations[0]!.actions).toEqual(loadOntology().sequences.status_service_added);
    expect(report.casework.subflow.correct).toBe(1);
    expect(report.casework.sequenceInOrder.correct).toBe(1);
    expect(events.find((e) => e.type === 'session.closed')).toMatchObject({
      reason: 'case status_service_added: resolved, the customer said goodbye',
    });
    const session = await store.getSession(ID);
    expect(session).toMatchObject({
      status: 'closed',
      closedReason: 'case status_service_added: resolved, the customer said goodbye',
    });
    const episode = await store.getEpisode(ID);
    expect(episode).toMatchObject({ sessionId: ID, userId: `customer-${ID}` });
    expect(episode?.agents).toEqual(expect.arrayContaining(['triage', 'account']));
    expect(episode?.transcript.some((t) => t.role === 'user' && t.content.includes('Crystal Minh'))).toBe(true);
    expect(report.counts.episodes).toBe(1);
  });
});
