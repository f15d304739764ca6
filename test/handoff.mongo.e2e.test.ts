/**
 * The handoff runtime end to end on MongoStore (the run's FerretDB, or MONGODB_URL): a coordinator
 * hands off to a specialist, who asks the user; every restore happens in a fresh "process" (a new
 * MongoStore with its own client, new agents, a new workflow), and the model's next request must
 * hold each stored message exactly once. Mirrors packages/handoff/test/handoff.restore.test.ts and
 * handoff.approval.test.ts, which run the same desks (packages/handoff/test/support/scenarioDesks.ts) on FileStore.
 */
import type { Message } from '@baton/core';
import { isHandoffToolName } from '@baton/handoff';
import { MongoStore } from '@baton/store-mongo';
import { MongoClient } from 'mongodb';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, ofType } from '../packages/handoff/test/support/helpers.js';
import { answeringDesk, approvalDesk, askingDesk } from '../packages/handoff/test/support/scenarioDesks.js';
import { testDatabaseName } from './support/mongoServer.js';
import { mongoTestUrl } from './support/mongoTestUrl.js';

const CYCLES = 5;
const dbName = testDatabaseName('handoff_e2e');
/** Stores opened by a test, closed after it even when it fails. */
const opened: MongoStore[] = [];

/** A fresh process's store: a new MongoStore with a client of its own, on the shared database. */
function openStore(): MongoStore {
  const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  opened.push(store);
  return store;
}

/** The stored messages a specialist is shown: without handoff calls and their results (the default handoff history). */
function specialistView(stored: readonly Message[]): Message[] {
  return stored.filter(
    (m) => !(m.role === 'tool' && isHandoffToolName(m.toolName)) && !(m.role === 'assistant' && m.agent === 'triage'),
  );
}

/** Stored-message ids of a model request (system instructions have none). */
function requestIds(messages: readonly { role: string; id?: string }[]): (string | undefined)[] {
  return messages.filter((m) => m.role !== 'system').map((m) => m.id);
}

/** A fresh process's view of each desk: a new MongoStore (own client), new agents, a new workflow. */
const openAskingDesk = () => askingDesk(openStore(), CYCLES + 1);
const openApprovalDesk = (refunds: string[]) => approvalDesk(openStore(), refunds);
const openAnsweringDesk = () => answeringDesk(openStore());

describe('the handoff runtime on MongoStore', () => {
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  afterAll(async () => {
    const client = new MongoClient(mongoTestUrl());
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  it('answers a user_input request after a restore in fresh objects, five times in a row, each stored message sent once', async () => {
    const first = openAskingDesk();
    const session = await first.workflow.session({ id: 'mongo-restore', userId: 'u-1' });
    const events = await collect(session.send('I was charged twice for order 1234'));
    expect(ofType(events, 'request')[0]?.request).toMatchObject({
      type: 'user_input',
      agent: 'billing',
      prompt: 'Question 1?',
      conversationRef: { branchId: 'main', throughSeq: 4 },
    });
    expect(events.at(-1)?.type).toBe('turn.completed');
    await first.store.close();

    for (let cycle = 1; cycle <= CYCLES + 1; cycle += 1) {
      const fresh = openAskingDesk();
      const restored = await fresh.workflow.session({ id: 'mongo-restore' });
      expect(restored.pendingRequests).toHaveLength(1);
      const pending = restored.pendingRequests[0]!;
      expect(pending.type === 'user_input' && pending.prompt).toBe(`Question ${cycle}?`);
      expect(Object.keys(pending).sort()).toEqual([
        'agent',
        'conversationRef',
        'createdAt',
        'id',
        'prompt',
        'toolCallId',
        'type',
      ]);

      const turn = await collect(restored.respond(pending.id, `answer-${cycle}`));
      expect(turn.at(-1)?.type).toBe('turn.completed');

      const sent = fresh.billing.model.requests[0]!.messages;
      const ids = requestIds(sent);
      expect(new Set(ids).size).toBe(ids.length);
      expect(sent.filter((m) => m.content === `answer-${cycle}`)).toHaveLength(1);
      expect(sent.filter((m) => m.content === 'I was charged twice for order 1234')).toHaveLength(1);
      const stored = await fresh.store.readMessages('mongo-restore', 'main');
      // Exactly the stored history as billing sees it (the last stored message is its answer to this request).
      expect(ids).toEqual(
        specialistView(stored)
          .slice(0, -1)
          .map((m) => m.id),
      );
      expect(danglingToolCalls(stored)).toEqual(cycle <= CYCLES ? [stored.at(-1)!.toolCalls![0]!.id] : []);
      await fresh.store.close();
    }

    const last = openAskingDesk();
    const stored = await last.store.readMessages('mongo-restore', 'main');
    expect(stored.map((m) => m.seq)).toEqual(stored.map((_, index) => index + 1));
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', agent: 'billing', content: 'All sorted.' });
    expect(stored.map((m) => m.content).filter((c) => c.startsWith('answer-'))).toEqual(
      Array.from({ length: CYCLES + 1 }, (_, i) => `answer-${i + 1}`),
    );
    expect(danglingToolCalls(stored)).toEqual([]);
    const checkpoint = await last.store.loadCheckpoint('mongo-restore', 'main');
    expect(JSON.stringify(checkpoint)).not.toContain('I was charged twice');
  });

  it('pauses on a tool_approval request; approved after a restore in a fresh store, the tool runs once', async () => {
    const refunds: string[] = [];
    const first = openApprovalDesk(refunds);
    const session = await first.workflow.session({ id: 'mongo-approval' });
    const events = await collect(session.send('Refund my double charge'));
    const request = ofType(events, 'request')[0]?.request;
    expect(request).toMatchObject({
      type: 'tool_approval',
      agent: 'billing',
      toolName: 'refund',
      arguments: '{"amount":40}',
    });
    expect(refunds).toEqual([]);
    await first.store.close();

    const second = openApprovalDesk(refunds);
    const restored = await second.workflow.session({ id: 'mongo-approval' });
    expect(restored.pendingRequests.map((r) => r.id)).toEqual([request!.id]);
    const answer = await collect(restored.respond(request!.id, { approved: true }));
    expect(refunds).toEqual(['refund 40']);
    expect(ofType(answer, 'tool.result')).toEqual([
      expect.objectContaining({ toolName: 'refund', content: 'Refunded 40 EUR.', isError: false }),
    ]);
    expect(answer.at(-1)).toMatchObject({ type: 'turn.completed' });
    const sent = second.billing.model.requests[0]!.messages;
    expect(new Set(requestIds(sent)).size).toBe(requestIds(sent).length);
    await second.store.close();

    const third = openApprovalDesk(refunds);
    const reopened = await third.workflow.session({ id: 'mongo-approval' });
    expect(reopened.pendingRequests).toEqual([]);
    const stored = await third.store.readMessages('mongo-approval', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'Done: Refunded 40 EUR.' });
    expect(stored.filter((m) => m.role === 'tool' && m.toolName === 'refund')).toHaveLength(1);
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(refunds).toEqual(['refund 40']);
  });

  it('stores a 20-turn conversation (a fresh store every 5 turns) as exactly 4 messages a turn, seqs 1…80', async () => {
    const TURNS = 20;
    const checkpointSizes: number[] = [];
    let desk = openAnsweringDesk();
    for (let turn = 1; turn <= TURNS; turn += 1) {
      if (turn % 5 === 1 && turn > 1) {
        await desk.store.close();
        desk = openAnsweringDesk();
      }
      const session = await desk.workflow.session({ id: 'mongo-twenty', userId: 'u-2' });
      const events = await collect(session.send(`question ${turn}`));
      expect(events.at(-1)?.type).toBe('turn.completed');
      const sent = desk.billing.model.requests.at(-1)!.messages;
      const ids = requestIds(sent);
      expect(new Set(ids).size).toBe(ids.length);
      const stored = await desk.store.readMessages('mongo-twenty', 'main');
      expect(stored).toHaveLength(4 * turn);
      expect(ids).toEqual(
        specialistView(stored)
          .slice(0, -1)
          .map((m) => m.id),
      );
      checkpointSizes.push(JSON.stringify(await desk.store.loadCheckpoint('mongo-twenty', 'main')).length);
    }

    const stored = await desk.store.readMessages('mongo-twenty', 'main');
    expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: 4 * TURNS }, (_, index) => index + 1));
    const expected = Array.from({ length: TURNS }, (_, index) => [
      `user:question ${index + 1}`,
      'assistant:triage:handoff_to_billing',
      'tool:handoff_to_billing',
      `assistant:billing:Answer to: question ${index + 1}`,
    ]).flat();
    expect(
      stored.map((m) => {
        if (m.role === 'user') return `user:${m.content}`;
        if (m.role === 'tool') return `tool:${m.toolName}`;
        return m.toolCalls === undefined
          ? `assistant:${m.agent}:${m.content}`
          : `assistant:${m.agent}:${m.toolCalls.map((c) => c.name).join(',')}`;
      }),
    ).toEqual(expected);
    expect(new Set(stored.map((m) => m.id)).size).toBe(stored.length);
    expect(danglingToolCalls(stored)).toEqual([]);
    // Checkpoints point at messages: the one at turn 20 is about as large as the one at turn 5.
    expect(checkpointSizes[19]!).toBeLessThan(checkpointSizes[4]! * 1.1);
    // Version claims (FerretDB) do not pile up with the turns: at most 16 per session or branch.
    expect(
      await desk.store.collections.versionClaims.countDocuments({ sessionId: 'mongo-twenty' }),
    ).toBeLessThanOrEqual(16);
  });
});
