/**
 * The support desk itself (its workflow, offline models, a FileStore in a temp dir) as an A2A agent
 * at `/a2a/` of the desk's web server, driven by the A2A SDK's own client over 127.0.0.1: a
 * conversation through a restart of the server (a new app, desk and store object on the same
 * folder), the refund's approval answered over A2A after the restart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message as A2AMessage, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { dataOf, textOf, userMessage } from '@baton/a2a';
import { afterEach, describe, expect, it } from 'vitest';
import { CRYSTAL, type ServedDesk, serveDesk } from './support/servedDesk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function asTask(result: Task | A2AMessage): Task {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
}

describe('the support desk over A2A (the SDK client, /a2a/ on the web server)', () => {
  it('holds a conversation through a restart; the refund waits in input-required and is approved over A2A', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'desk-a2a-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    let served: ServedDesk = await serveDesk(dir);
    let running = true;
    cleanups.push(async () => {
      if (running) await served.close();
    });

    const card = (await (await fetch(`${served.url}/a2a/.well-known/agent-card.json`)).json()) as {
      name: string;
      skills: { id: string }[];
    };
    expect(card.name).toBe('support-desk');
    expect(card.skills.map((s) => s.id)).toEqual([
      'triage',
      'account',
      'billing',
      'orders',
      'returns',
      'technical',
      'products',
    ]);

    // Turn 1: triage hands the case to the account specialist, who asks how much: input-required.
    let client = await new ClientFactory().createFromUrl(`${served.url}/a2a/`);
    const first = asTask(await client.sendMessage(send(userMessage(CRYSTAL.complaint))));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(first.status?.message?.parts)).toBe('How much were you charged (the amount in dollars)?');
    expect(dataOf(first.status?.message?.parts)).toMatchObject({
      batonRequest: { type: 'user_input', agent: 'account' },
    });

    // Turn 2: the answer, on the same task: the refund waits for a human's approval, still input-required.
    const ids = { contextId: first.contextId, taskId: first.id };
    const second = asTask(await client.sendMessage(send(userMessage(CRYSTAL.amount, ids))));
    expect(second.id).toBe(first.id);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(second.status?.message?.parts)).toContain('account asks to approve offer-refund({"amount":"40"})');
    expect(dataOf(second.status?.message?.parts)).toMatchObject({
      batonRequest: { type: 'tool_approval', agent: 'account', toolName: 'offer-refund', arguments: '{"amount":"40"}' },
    });

    // The server restarts: a new app, desk and store object on the same folder (and a new port).
    await served.close();
    running = false;
    served = await serveDesk(dir);
    running = true;
    client = await new ClientFactory().createFromUrl(`${served.url}/a2a/`);
    const waiting = await client.getTask({ tenant: '', id: first.id });
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(waiting.history[0]?.parts)).toBe(CRYSTAL.complaint);

    // Turn 3: the approval, answered over A2A after the restart: the refund runs and the task completes.
    const third = asTask(await client.sendMessage(send(userMessage('yes', ids))));
    expect(third.id).toBe(first.id);
    expect(third.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = 'I have pulled up your account, updated your account and refunded $40.';
    expect(textOf(third.status?.message?.parts)).toContain(answer);
    expect(textOf(third.artifacts[0]?.parts)).toContain(answer);

    // Turn 4: a new task in the same context continues the same session; the goodbye closes the case.
    const fourth = asTask(await client.sendMessage(send(userMessage(CRYSTAL.goodbye, { contextId: first.contextId }))));
    expect(fourth.id).not.toBe(first.id);
    expect(fourth.contextId).toBe(first.contextId);
    expect(fourth.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // One Baton session holds the whole conversation: one refund, approved, run once.
    const sessionId = served.desk.workflow.sessionIdOf(first.contextId);
    const store = served.desk.store;
    expect(await store.getSession(sessionId)).toMatchObject({
      status: 'closed',
      closedReason: expect.stringContaining('resolved'),
      state: { customerName: 'Crystal Minh' },
    });
    const messages = await store.readMessages(sessionId, 'main');
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      CRYSTAL.complaint,
      CRYSTAL.goodbye,
    ]);
    const refunds = messages.filter((m) => m.role === 'tool' && m.toolName === 'offer-refund');
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ isError: false, content: expect.stringContaining('$40') });
    expect(messages.some((m) => m.role === 'tool' && m.toolName === 'handoff_to_account')).toBe(true);
  }, 120_000);
});
