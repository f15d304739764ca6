import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message as A2AMessage, type Task, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { type A2AAuthenticate, textOf, userMessage } from '@baton/a2a';
import { FileStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { billingAgent, refundDesk } from './support/refundDesk.js';
import { type ServedA2A, serveA2A } from './support/serveA2A.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The tokens the server accepts: ann and bob of tenant acme, eve of tenant globex. */
const USERS: Record<string, { tenantId: string; userId: string }> = {
  'Bearer ann-token': { tenantId: 'acme', userId: 'ann' },
  'Bearer bob-token': { tenantId: 'acme', userId: 'bob' },
  'Bearer eve-token': { tenantId: 'globex', userId: 'eve' },
};
const authenticate: A2AAuthenticate = (request) => USERS[request.headers.get('authorization') ?? ''];

/** The desk on a FileStore in a temp dir, served with `authenticate` (or without) on 127.0.0.1. */
async function startDesk(withAuth: boolean): Promise<{ served: ServedA2A; store: FileStore }> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-a2a-auth-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const store = new FileStore({ directory });
  cleanups.push(() => store.close());
  const served = await serveA2A(refundDesk(store, billingAgent([])), 0, withAuth ? { authenticate } : {});
  cleanups.push(() => served.close());
  return { served, store };
}

/** The SDK's client, sending `Authorization: Bearer <token>` on every JSON-RPC call (none without a token). */
function clientOf(url: string, token?: string): Promise<Client> {
  const headers = async () => (token === undefined ? {} : { authorization: `Bearer ${token}` });
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers,
    shouldRetryWithHeaders: async () => undefined,
  });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  });
  return new ClientFactory(options).createFromUrl(url);
}

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function asTask(result: Task | A2AMessage): Task {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
}

describe('an A2A agent with authenticate (SDK client, FileStore, 127.0.0.1)', () => {
  it("keeps each user's tasks and contexts: others get TaskNotFound, A's session unchanged", async () => {
    const { served, store } = await startDesk(true);
    const ann = await clientOf(served.url, 'ann-token');
    const bob = await clientOf(served.url, 'bob-token');
    const eve = await clientOf(served.url, 'eve-token');

    const task = asTask(await ann.sendMessage(send(userMessage('Where is my parcel?'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The context's session is ann's, in her tenant's space.
    const sessionId = `support-desk:${task.contextId}`;
    const session = await store.getSession(sessionId, { tenantId: 'acme' });
    expect(session).toMatchObject({ tenantId: 'acme', userId: 'ann' });
    const before = await store.readMessages(sessionId, 'main', { tenantId: 'acme' });

    for (const other of [bob, eve]) {
      await expect(other.getTask({ tenant: '', id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
      const continued = other.sendMessage(send(userMessage('Show me the order', { contextId: task.contextId })));
      await expect(continued).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(continued).rejects.toThrow(`Context "${task.contextId}" not found`);
      const streamed = (async () => {
        for await (const _ of other.sendMessageStream(send(userMessage('Hi', { contextId: task.contextId })))) {
          // nothing may arrive
        }
      })();
      await expect(streamed).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(other.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(
        TaskNotFoundError,
      );
      const listed = await other.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 50,
        pageToken: '',
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
      expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
    }
    expect(await store.readMessages(sessionId, 'main', { tenantId: 'acme' })).toEqual(before);
    expect((await store.getSession(sessionId, { tenantId: 'acme' }))?.version).toBe(session?.version);

    // Ann herself reads her task and goes on in her context.
    expect((await ann.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const next = asTask(await ann.sendMessage(send(userMessage('Thanks', { contextId: task.contextId }))));
    expect(next.contextId).toBe(task.contextId);
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // A context whose session bob made outside A2A (REST, AG-UI): ann's and eve's tasks there are rejected.
    await store.createSession({ id: 'support-desk:bobs-chat', tenantId: 'acme', userId: 'bob' });
    for (const stranger of [ann, eve]) {
      const refused = asTask(await stranger.sendMessage(send(userMessage('Hi', { contextId: 'bobs-chat' }))));
      expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
      expect(textOf(refused.status?.message?.parts)).toContain('contextId "bobs-chat" is not available');
    }
    expect(await store.readMessages('support-desk:bobs-chat', 'main', { tenantId: 'acme' })).toEqual([]);
  }, 60_000);

  it('answers 401 to a missing or bad token, declares bearer; without authenticate, all may call', async () => {
    const { served, store } = await startDesk(true);
    const card = await (await clientOf(served.url)).getAgentCard();
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer' },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    // A 0.3 client's card (no A2A-Version header) says the same in 0.3 terms.
    const legacy = (await (await fetch(`${served.url}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    expect(legacy.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: 'http', scheme: 'Bearer' }) });
    expect(legacy.security).toEqual([{ bearer: [] }]);

    for (const token of [undefined, 'forged-token']) {
      const client = await clientOf(served.url, token);
      await expect(client.sendMessage(send(userMessage('Hello')))).rejects.toThrow(/Status: 401/);
    }
    const raw = await fetch(`${served.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
    });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    expect((await store.listSessions({})).filter((s) => s.id.startsWith('support-desk:'))).toEqual([]);

    // The same desk without authenticate: every caller shares one space (local demos), sessions of no user or tenant.
    const open = await startDesk(false);
    const one = await clientOf(open.served.url);
    const two = await clientOf(open.served.url, 'anything');
    const task = asTask(await one.sendMessage(send(userMessage('Where is my parcel?'))));
    expect((await two.getTask({ tenant: '', id: task.id })).id).toBe(task.id);
    const next = asTask(await two.sendMessage(send(userMessage('Thanks', { contextId: task.contextId }))));
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const session = await open.store.getSession(`support-desk:${task.contextId}`);
    expect(session?.userId).toBeUndefined();
    expect(session?.tenantId).toBeUndefined();
  }, 60_000);
});
