import { type Message as A2AMessage, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { dataPart, textOf, userMessage } from '@baton/a2a';
import { InMemoryStore } from '@baton/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { billingAgent, type RefundLedger, refundDesk } from './support/refundDesk.js';
import { type ServedA2A, serveA2A } from './support/serveA2A.js';

let served: ServedA2A;
let client: Client;
let ledger: RefundLedger;
let store: InMemoryStore;

beforeEach(async () => {
  ledger = [];
  store = new InMemoryStore();
  served = await serveA2A(refundDesk(store, billingAgent(ledger)));
  client = await new ClientFactory().createFromUrl(served.url);
});
afterEach(() => served.close());

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });
const asTask = (result: Task | A2AMessage): Task => {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
};

/** A task paused on the refund's approval. */
async function waitingTask(): Promise<Task> {
  const task = asTask(await client.sendMessage(send(userMessage('I was charged twice for order 1234'))));
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

describe('A2A tasks of a served workflow', () => {
  it('takes a rejection as data, with the reason the model reads', async () => {
    const task = await waitingTask();
    const answer = userMessage([dataPart({ approved: false, reason: 'I want store credit instead' })], {
      contextId: task.contextId,
      taskId: task.id,
    });
    const done = asTask(await client.sendMessage(send(answer)));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done.status?.message?.parts)).toContain('I want store credit instead');
    expect(ledger).toEqual([]);
  });

  it('keeps the task input-required, saying what it expects, when the answer is not an approval', async () => {
    const task = await waitingTask();
    const again = asTask(
      await client.sendMessage(send(userMessage('what?', { contextId: task.contextId, taskId: task.id }))),
    );
    expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(again.status?.message?.parts)).toContain('Not understood as an approval');
    expect(textOf(again.status?.message?.parts)).toContain('Answer "yes" or "no"');
    expect(ledger).toEqual([]);
  });

  it('rejects a new task in a context whose task waits, naming that task', async () => {
    const task = await waitingTask();
    const other = asTask(await client.sendMessage(send(userMessage('hello?', { contextId: task.contextId }))));
    expect(other.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(other.status?.message?.parts)).toContain(`taskId "${task.id}"`);
    expect((await client.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('cancels a waiting task: the Baton turn is discarded and the next task of the context starts afresh', async () => {
    const task = await waitingTask();
    const cancelled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const next = asTask(await client.sendMessage(send(userMessage('Thanks anyway', { contextId: task.contextId }))));
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(next.status?.message?.parts)).toContain('Triage here');
    const messages = await store.readMessages(`support-desk:${task.contextId}`, 'main');
    expect(messages.find((m) => m.role === 'tool' && m.toolName === 'refund')?.content).toMatch(/discarded/i);
    expect(ledger).toEqual([]);
  });

  it('a task cancelled after a restart (no live bus) lets the next task of its context start afresh', async () => {
    const task = await waitingTask();
    // A restart: a new workflow and server on the same store; the SDK no longer holds the task's bus.
    await served.close();
    served = await serveA2A(refundDesk(store, billingAgent(ledger)));
    client = await new ClientFactory().createFromUrl(served.url);
    const cancelled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const next = asTask(await client.sendMessage(send(userMessage('Thanks anyway', { contextId: task.contextId }))));
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(next.status?.message?.parts)).toContain('Triage here');
    expect(ledger).toEqual([]);
  });

  it('rejects a contextId that cannot name a Baton session, saying why', async () => {
    const bad = asTask(await client.sendMessage(send(userMessage('hi', { contextId: 'a/b c' }))));
    expect(bad.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(bad.status?.message?.parts)).toContain('contextId "a/b c" is not usable as a Baton session id');
    // The refused task is kept: read back, it holds the message sent and the reason, once each.
    const read = await client.getTask({ tenant: '', id: bad.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(read.history.map((m) => textOf(m.parts))).toEqual(['hi', textOf(bad.status?.message?.parts)]);
    expect(bad.history.map((m) => textOf(m.parts))).toEqual(['hi', textOf(bad.status?.message?.parts)]);
  });

  it('answers A2A 0.3 clients (message/send, tasks/get) on the same endpoint', async () => {
    const rpc = async (method: string, params: unknown) => {
      const response = await fetch(`${served.url}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { result: { id: string; kind: string; status: { state: string } } }).result;
    };
    const message = {
      kind: 'message',
      role: 'user',
      messageId: crypto.randomUUID(),
      parts: [{ kind: 'text', text: 'Hello there' }],
    };
    const sent = await rpc('message/send', { message });
    expect(sent.kind).toBe('task');
    expect(sent.status.state).toBe('completed');
    expect((await rpc('tasks/get', { id: sent.id })).status.state).toBe('completed');
  });
});
