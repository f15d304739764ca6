import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message as A2AMessage, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { dataOf, textOf, userMessage } from '@baton/a2a';
import { FileStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { billingAgent, type RefundLedger, refundDesk } from './support/refundDesk.js';
import { type ServedA2A, serveA2A } from './support/serveA2A.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One "process" of the Baton side: a FileStore on `directory`, the desk, served on 127.0.0.1. */
async function startDesk(
  directory: string,
  ledger: RefundLedger,
  port = 0,
): Promise<{ served: ServedA2A; store: FileStore }> {
  const store = new FileStore({ directory });
  const served = await serveA2A(refundDesk(store, billingAgent(ledger)), port);
  return { served, store };
}

async function stop(process: { served: ServedA2A; store: FileStore }): Promise<void> {
  await process.served.close();
  await process.store.close();
}

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function asTask(result: Task | A2AMessage): Task {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
}

describe('a workflow served over A2A (SDK client and server, FileStore, 127.0.0.1)', () => {
  it('holds three turns, an approval answered over A2A after a restart in input-required', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-a2a-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const ledger: RefundLedger = [];

    let desk = await startDesk(directory, ledger);
    const port = desk.served.port;
    const card = (await (await fetch(`${desk.served.url}/.well-known/agent-card.json`)).json()) as {
      name: string;
      skills: Array<{ id: string }>;
    };
    expect(card.name).toBe('support-desk');
    expect(card.skills.map((s) => s.id)).toEqual(['triage', 'billing']);

    // Turn 1: the desk hands off to billing, whose refund waits for approval: input-required.
    let client = await new ClientFactory().createFromUrl(desk.served.url);
    const first = asTask(await client.sendMessage(send(userMessage('I was charged twice for order 1234'))));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const asked = first.status?.message;
    expect(textOf(asked?.parts)).toContain('billing asks to approve refund({"amount":40})');
    expect(dataOf(asked?.parts)).toMatchObject({
      batonRequest: { type: 'tool_approval', toolName: 'refund', agent: 'billing' },
    });
    expect(ledger).toEqual([]);

    // The Baton side restarts: a new store object, workflow and server on the same port and directory.
    await stop(desk);
    desk = await startDesk(directory, ledger, port);
    cleanups.push(() => stop(desk));
    client = await new ClientFactory().createFromUrl(desk.served.url);
    const waiting = await client.getTask({ tenant: '', id: first.id });
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(waiting.history[0]?.parts)).toBe('I was charged twice for order 1234');

    // Turn 2: the approval, answered over A2A on the same task.
    const approved = asTask(
      await client.sendMessage(send(userMessage('yes', { contextId: first.contextId, taskId: first.id }))),
    );
    expect(approved.id).toBe(first.id);
    expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(approved.status?.message?.parts)).toBe('Done: Refunded 40 EUR.');
    expect(textOf(approved.artifacts[0]?.parts)).toBe('Done: Refunded 40 EUR.');
    expect(ledger).toEqual([40]);

    // Turn 3: a new task in the same context, streamed; the coordinator answers it.
    const states: TaskState[] = [];
    let last: Task | undefined;
    for await (const event of client.sendMessageStream(
      send(userMessage('Thanks! When will I see it?', { contextId: first.contextId })),
    )) {
      if (event.payload?.$case === 'task') last = event.payload.value;
      if (event.payload?.$case === 'statusUpdate' && event.payload.value.status !== undefined)
        states.push(event.payload.value.status.state);
    }
    expect(last?.contextId).toBe(first.contextId);
    expect(last?.id).not.toBe(first.id);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(states).toContain(TaskState.TASK_STATE_WORKING);

    const third = await client.getTask({ tenant: '', id: last!.id });
    expect(third.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(third.history.map((m) => textOf(m.parts))).toEqual([
      'Thanks! When will I see it?',
      'Triage here: you said "Thanks! When will I see it?". Refunds show within 5 days.',
    ]);
    // The first task's history: the question, the approval asked and given, and the answer (each once).
    const done = await client.getTask({ tenant: '', id: first.id });
    expect(done.history.map((m) => textOf(m.parts))).toEqual([
      'I was charged twice for order 1234',
      expect.stringContaining('billing asks to approve refund({"amount":40})'),
      'yes',
      'Done: Refunded 40 EUR.',
    ]);

    // One Baton session holds the whole conversation, found from the contextId.
    const messages = await desk.store.readMessages(`support-desk:${first.contextId}`, 'main');
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'I was charged twice for order 1234',
      'Thanks! When will I see it?',
    ]);
  });
});
