/**
 * The support desk itself (its workflow, offline models, a FileStore in a temp dir) as an A2A agent
 * at `/a2a/` of the desk's web server, driven by the A2A SDK's own client over 127.0.0.1: a
 * conversation through a restart of the server (a new app, desk and store object on the same
 * folder), the refund's approval answered over A2A after the restart, blocking (`message/send`)
 * and streamed (`message/stream`, SSE); authenticated with the desk's tokens (as REST): another
 * customer gets `TaskNotFound`, a missing token 401.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message as A2AMessage, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { dataOf, textOf, userMessage } from '@baton/a2a';
import { afterEach, describe, expect, it } from 'vitest';
import { CRYSTAL, type ServedDesk, serveDesk } from './support/servedDesk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The desk's tenant: its demo tokens (`Authorization: Bearer <customer id>`) are users of `acme-web`. */
const TENANT = { tenantId: 'acme-web' };

/** The SDK's client of the desk's `/a2a/`, sending `Authorization: Bearer <customer>` (none for `null`). */
function deskClient(url: string, customer: string | null = 'crystal'): Promise<Client> {
  const headers = async () => (customer === null ? {} : { authorization: `Bearer ${customer}` });
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers,
    shouldRetryWithHeaders: async () => undefined,
  });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  });
  return new ClientFactory(options).createFromUrl(`${url}/a2a/`);
}

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function asTask(result: Task | A2AMessage): Task {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
}

/** One event of a streamed message as the client sees it. */
interface Seen {
  kind: 'task' | 'status' | 'artifact' | 'message';
  state?: TaskState | undefined;
  text: string;
  messageId?: string;
}

/** Sends `message` with `message/stream` (SSE) and collects what the client sees, in order. */
async function stream(client: Client, message: A2AMessage): Promise<{ events: Seen[]; task: Task; last: Seen }> {
  const events: Seen[] = [];
  let task: Task | undefined;
  for await (const { payload } of client.sendMessageStream(send(message))) {
    if (payload?.$case === 'task') {
      task = payload.value;
      events.push({ kind: 'task', state: payload.value.status?.state, text: '' });
    } else if (payload?.$case === 'statusUpdate') {
      const said = payload.value.status?.message;
      events.push({
        kind: 'status',
        state: payload.value.status?.state,
        text: textOf(said?.parts),
        ...(said === undefined ? {} : { messageId: said.messageId }),
      });
    } else if (payload?.$case === 'artifactUpdate') {
      events.push({ kind: 'artifact', text: textOf(payload.value.artifact?.parts) });
    } else if (payload?.$case === 'message') events.push({ kind: 'message', text: textOf(payload.value.parts) });
  }
  if (task === undefined) throw new Error(`the stream sent no task: ${JSON.stringify(events)}`);
  return { events, task, last: events.at(-1)! };
}

const said = (history: readonly A2AMessage[]) =>
  history.map((m) => `${m.role === Role.ROLE_USER ? 'user' : 'agent'}: ${textOf(m.parts)}`);

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
    let client = await deskClient(served.url);
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
    client = await deskClient(served.url);
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
    // The account specialist closes the case with end_conversation and no words: the task says so, never empty.
    const closing = 'The conversation was closed without a reply (case status_service_added: resolved';
    expect(textOf(fourth.status?.message?.parts)).toContain(closing);
    const fourthRead = await client.getTask({ tenant: '', id: fourth.id });
    expect(textOf(fourthRead.status?.message?.parts)).toBe(textOf(fourth.status?.message?.parts));

    // One Baton session holds the whole conversation: one refund, approved, run once.
    const sessionId = served.desk.workflow.sessionIdOf(first.contextId);
    const store = served.desk.store;
    expect(await store.getSession(sessionId, TENANT)).toMatchObject({
      status: 'closed',
      closedReason: expect.stringContaining('resolved'),
      state: { customerName: 'Crystal Minh' },
    });
    const messages = await store.readMessages(sessionId, 'main', TENANT);
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      CRYSTAL.complaint,
      CRYSTAL.goodbye,
    ]);
    const refunds = messages.filter((m) => m.role === 'tool' && m.toolName === 'offer-refund');
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ isError: false, content: expect.stringContaining('$40') });
    expect(messages.some((m) => m.role === 'tool' && m.toolName === 'handoff_to_account')).toBe(true);
  }, 120_000);

  it('streams the conversation (message/stream) through a restart between approval asked and answered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'desk-a2a-stream-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    let served: ServedDesk = await serveDesk(dir);
    let running = true;
    cleanups.push(async () => {
      if (running) await served.close();
    });
    let client = await deskClient(served.url);

    // Turn 1, streamed: the task is submitted, works, and waits on the account specialist's question.
    const one = await stream(client, userMessage(CRYSTAL.complaint));
    expect(one.events[0]).toMatchObject({ kind: 'task', state: TaskState.TASK_STATE_SUBMITTED });
    expect(one.events).toContainEqual({ kind: 'status', state: TaskState.TASK_STATE_WORKING, text: '' });
    const question = 'How much were you charged (the amount in dollars)?';
    expect(one.last).toMatchObject({ kind: 'status', state: TaskState.TASK_STATE_INPUT_REQUIRED, text: question });
    const ids = { contextId: one.task.contextId, taskId: one.task.id };

    // Turn 2, streamed on the same task: the answer; the refund now waits for approval.
    const two = await stream(client, userMessage(CRYSTAL.amount, ids));
    expect(two.task.id).toBe(ids.taskId);
    expect(two.events[0]).toMatchObject({ kind: 'task', state: TaskState.TASK_STATE_WORKING });
    const approve = 'account asks to approve offer-refund({"amount":"40"})';
    expect(two.last).toMatchObject({ kind: 'status', state: TaskState.TASK_STATE_INPUT_REQUIRED });
    expect(two.last.text).toContain(approve);

    // The server restarts while the approval waits.
    await served.close();
    running = false;
    served = await serveDesk(dir);
    running = true;
    client = await deskClient(served.url);

    // Turn 3, streamed after the restart: "yes". The stream opens with the task as it stands (the
    // answers so far included), then the reply as a working update, the `reply` artifact, `completed`.
    const three = await stream(client, userMessage('yes', ids));
    expect(three.task.id).toBe(ids.taskId);
    expect(said(three.task.history)).toEqual([
      `user: ${CRYSTAL.complaint}`,
      `agent: ${question}`,
      `user: ${CRYSTAL.amount}`,
      expect.stringMatching(/^agent: account asks to approve offer-refund/),
      'user: yes',
    ]);
    const answer = 'I have pulled up your account, updated your account and refunded $40.';
    expect(three.events.map((e) => e.kind)).toEqual(['task', 'status', 'status', 'artifact', 'status']);
    const [, working, update, artifact, done] = three.events;
    expect(working).toMatchObject({ state: TaskState.TASK_STATE_WORKING, text: '' });
    expect(update).toMatchObject({ state: TaskState.TASK_STATE_WORKING, text: expect.stringContaining(answer) });
    expect(artifact?.text).toBe(update?.text);
    expect(done).toMatchObject({ state: TaskState.TASK_STATE_COMPLETED, text: update?.text });
    expect(done?.messageId).toBe(update?.messageId); // the reply is one message, not a copy

    // Turn 4, streamed as a new task of the context: the goodbye; the case is closed, and the task says so.
    const four = await stream(client, userMessage(CRYSTAL.goodbye, { contextId: ids.contextId }));
    expect(four.task.id).not.toBe(ids.taskId);
    expect(four.last).toMatchObject({ kind: 'status', state: TaskState.TASK_STATE_COMPLETED });
    expect(four.last.text).toContain(
      'The conversation was closed without a reply (case status_service_added: resolved',
    );

    // Read back: every message the client sent in the task, and every agent message once.
    const first = await client.getTask({ tenant: '', id: ids.taskId });
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(said(first.history)).toEqual([...said(three.task.history), `agent: ${update?.text}`]);
    expect(first.status?.message?.messageId).toBe(update?.messageId);

    // The refund ran exactly once, approved, in the one session of the context.
    const sessionId = served.desk.workflow.sessionIdOf(ids.contextId);
    const messages = await served.desk.store.readMessages(sessionId, 'main', TENANT);
    const refunds = messages.filter((m) => m.role === 'tool' && m.toolName === 'offer-refund');
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ isError: false, content: expect.stringContaining('$40') });
    expect((await served.desk.store.getSession(sessionId, TENANT))?.status).toBe('closed');
  }, 120_000);

  it('serves each customer only their own conversation (others get TaskNotFound), 401 without a token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'desk-a2a-auth-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const served = await serveDesk(dir);
    cleanups.push(() => served.close());
    const crystal = await deskClient(served.url, 'crystal');
    const other = await deskClient(served.url, 'mallory');

    const first = asTask(await crystal.sendMessage(send(userMessage(CRYSTAL.complaint))));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const sessionId = served.desk.workflow.sessionIdOf(first.contextId);
    expect(await served.desk.store.getSession(sessionId, TENANT)).toMatchObject({ userId: 'crystal' });
    const before = await served.desk.store.readMessages(sessionId, 'main', TENANT);

    // Another customer can neither read the task, nor answer it, nor continue the context.
    await expect(other.getTask({ tenant: '', id: first.id })).rejects.toBeInstanceOf(TaskNotFoundError);
    const ids = { contextId: first.contextId, taskId: first.id };
    await expect(other.sendMessage(send(userMessage(CRYSTAL.amount, ids)))).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(other.sendMessage(send(userMessage('hello', { contextId: first.contextId })))).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    expect(await served.desk.store.readMessages(sessionId, 'main', TENANT)).toEqual(before);

    // No token, or a malformed one: 401, as on /api.
    for (const customer of [null, 'not a token!']) {
      const anonymous = await deskClient(served.url, customer);
      await expect(anonymous.getTask({ tenant: '', id: first.id })).rejects.toThrow(/Status: 401/);
    }

    // Crystal goes on: her answer moves the task to the refund's approval.
    const second = asTask(await crystal.sendMessage(send(userMessage(CRYSTAL.amount, ids))));
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(second.status?.message?.parts)).toContain('account asks to approve offer-refund');
  }, 120_000);
});
