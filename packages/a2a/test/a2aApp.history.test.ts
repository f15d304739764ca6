/**
 * A task's history as an A2A client reads it (`GetTask`, and the task `SendMessage` returns), held
 * to the SDK's own behaviour: the same conversation served with the SDK's `InMemoryTaskStore` is
 * the oracle, and the thread store must agree with it before and after a restart.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message as A2AMessage, AGENT_CARD_PATH, Role, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import {
  A2AThreadStore,
  dataOf,
  dataPart,
  textOf,
  textPart,
  userMessage,
  WorkflowA2AExecutor,
  workflowAgentCard,
} from '@baton/a2a';
import { FileStore, InMemoryStore } from '@baton/core';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { billingAgent, type RefundLedger, refundDesk } from './support/refundDesk.js';
import { serveA2A } from './support/serveA2A.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });
const asTask = (result: Task | A2AMessage): Task => {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
};

/** What a client compares of a history: roles, the client's message ids, text and data (run-specific ids left out). */
function view(history: readonly A2AMessage[]) {
  return history.map((m) => {
    const data = dataOf(m.parts);
    const request = data?.batonRequest as Record<string, unknown> | undefined;
    return {
      role: m.role === Role.ROLE_USER ? 'user' : 'agent',
      ...(m.role === Role.ROLE_USER ? { messageId: m.messageId } : { agent: m.metadata?.agent }),
      text: textOf(m.parts),
      data: request === undefined ? data : { batonRequest: { ...request, id: '…' } },
    };
  });
}

/** The reference: the same desk and executor, but the SDK's own in-memory task store. */
async function serveWithSdkStore(ledger: RefundLedger): Promise<Client> {
  const store = new InMemoryStore();
  const desk = refundDesk(store, billingAgent(ledger));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const executor = new WorkflowA2AExecutor(desk, new A2AThreadStore({ store, agentId: desk.name }));
  const handler = new DefaultRequestHandler(
    workflowAgentCard(desk, { url: `${url}/` }),
    new InMemoryTaskStore(),
    executor,
  );
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return new ClientFactory().createFromUrl(url);
}

/** The conversation both servers hold: a refund that waits, an answer that is not one, then approval as data. */
const complaint = userMessage('I was charged twice for order 1234', { messageId: 'client-1' });
const unclear = (ids: { contextId: string; taskId: string }) => userMessage('what?', { ...ids, messageId: 'client-2' });
const approval = (ids: { contextId: string; taskId: string }) =>
  userMessage([textPart('Go ahead.'), dataPart({ approved: true })], { ...ids, messageId: 'client-3' });

describe('A2A task history (the SDK in-memory task store as the oracle)', () => {
  it('lists each message the client sent, answers included, and each agent message once, over a restart', async () => {
    // The oracle: the SDK's own task store, no restart.
    const reference = await serveWithSdkStore([]);
    const r1 = asTask(await reference.sendMessage(send(complaint)));
    const rIds = { contextId: r1.contextId, taskId: r1.id };
    await reference.sendMessage(send(unclear(rIds)));
    const rWaiting = await reference.getTask({ tenant: '', id: r1.id });
    const rDone = asTask(await reference.sendMessage(send(approval(rIds))));
    const expected = view((await reference.getTask({ tenant: '', id: r1.id })).history);
    expect(expected.map((m) => `${m.role}: ${m.text.slice(0, 30).trim()}`)).toEqual([
      'user: I was charged twice for order',
      'agent: billing asks to approve refund',
      'user: what?',
      'agent: Not understood as an approval:',
      'user: Go ahead.',
      'agent: Done: Refunded 40 EUR.',
    ]);
    expect(view(rDone.history)).toEqual(expected);

    // The thread store on a FileStore, with a restart while the task waits.
    const directory = await mkdtemp(join(tmpdir(), 'baton-a2a-history-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const ledger: RefundLedger = [];
    let store = new FileStore({ directory });
    let served = await serveA2A(refundDesk(store, billingAgent(ledger)));
    let client = await new ClientFactory().createFromUrl(served.url);
    const first = asTask(await client.sendMessage(send(complaint)));
    const ids = { contextId: first.contextId, taskId: first.id };
    const again = asTask(await client.sendMessage(send(unclear(ids))));
    expect(view(again.history)).toEqual(view(rWaiting.history));
    const before = await client.getTask({ tenant: '', id: first.id });
    expect(view(before.history)).toEqual(view(rWaiting.history));
    expect(view([before.status!.message!])).toEqual(view([rWaiting.status!.message!]));

    await served.close();
    await store.close();
    store = new FileStore({ directory });
    served = await serveA2A(refundDesk(store, billingAgent(ledger)));
    cleanups.push(async () => {
      await served.close();
      await store.close();
    });
    client = await new ClientFactory().createFromUrl(served.url);
    const after = await client.getTask({ tenant: '', id: first.id });
    expect(view(after.history)).toEqual(view(before.history));
    expect(after.status?.message?.messageId).toBe(before.status?.message?.messageId);

    const done = asTask(await client.sendMessage(send(approval(ids))));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(view(done.history)).toEqual(expected);
    expect(view([done.status!.message!])).toEqual(view([rDone.status!.message!]));
    const read = await client.getTask({ tenant: '', id: first.id });
    expect(view(read.history)).toEqual(expected);
    // The completion is the last history entry itself, not a copy: every messageId once.
    expect(read.status?.message?.messageId).toBe(read.history.at(-1)?.messageId);
    expect(new Set(read.history.map((m) => m.messageId)).size).toBe(read.history.length);
    // The answer as sent: its text and its data part.
    expect(read.history[4]?.parts).toEqual(approval(ids).parts);
    expect(ledger).toEqual([40]);
  });

  it('keeps a refused and a cancelled task readable; a refusal does not cut the waiting task short', async () => {
    const ledger: RefundLedger = [];
    const store = new InMemoryStore();
    let served = await serveA2A(refundDesk(store, billingAgent(ledger)));
    cleanups.push(() => served.close());
    let client = await new ClientFactory().createFromUrl(served.url);
    const waiting = asTask(await client.sendMessage(send(userMessage('I was charged twice for order 1234'))));
    const ids = { contextId: waiting.contextId, taskId: waiting.id };
    // A second task while the first waits is refused; it says why, and that stays after a reload.
    const refused = asTask(await client.sendMessage(send(userMessage('hello?', { contextId: waiting.contextId }))));
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    const refusedRead = await client.getTask({ tenant: '', id: refused.id });
    expect(view(refusedRead.history).map((m) => m.text)).toEqual(['hello?', textOf(refused.status?.message?.parts)]);
    expect(textOf(refusedRead.status?.message?.parts)).toContain(`taskId "${waiting.id}"`);

    // The waiting task is approved: its reply is its own, not lost to the refused task's part of the session.
    const done = asTask(await client.sendMessage(send(userMessage('yes', ids))));
    expect(textOf(done.status?.message?.parts)).toBe('Done: Refunded 40 EUR.');
    const doneRead = await client.getTask({ tenant: '', id: waiting.id });
    expect(textOf(doneRead.artifacts[0]?.parts)).toBe('Done: Refunded 40 EUR.');
    expect(view(doneRead.history).map((m) => m.text)).toEqual([
      'I was charged twice for order 1234',
      expect.stringContaining('billing asks to approve refund'),
      'yes',
      'Done: Refunded 40 EUR.',
    ]);
    expect(view((await client.getTask({ tenant: '', id: refused.id })).history)).toEqual(view(refusedRead.history));

    // A task cancelled after a restart (the SDK's own cancel message) keeps that message.
    const next = asTask(await client.sendMessage(send(userMessage('I was charged twice again'))));
    await served.close();
    served = await serveA2A(refundDesk(store, billingAgent(ledger)));
    client = await new ClientFactory().createFromUrl(served.url);
    const cancelled = await client.cancelTask({ tenant: '', id: next.id, metadata: undefined });
    const cancelledRead = await client.getTask({ tenant: '', id: next.id });
    expect(cancelledRead.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(textOf(cancelledRead.status?.message?.parts)).toBe(textOf(cancelled.status?.message?.parts));
    expect(textOf(cancelledRead.status?.message?.parts)).not.toBe('');
    expect(cancelledRead.history.at(-1)?.messageId).toBe(cancelledRead.status?.message?.messageId);
    expect(ledger).toEqual([40]);
  });
});
