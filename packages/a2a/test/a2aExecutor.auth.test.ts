import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthenticatingFetchWithRetry } from '@a2a-js/sdk/client';
import { type A2AAuthenticate, A2AExecutor, type A2AExecutorOptions } from '@baton/a2a';
import { FileStore, RemoteExecutorError } from '@baton/core';
import type { HandoffSession } from '@baton/handoff';
import { afterEach, describe, expect, it } from 'vitest';
import { billingDesk, type RefundLedger, refundDesk } from './support/refundDesk.js';
import { serveA2A } from './support/serveA2A.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempStore(): Promise<FileStore> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-a2a-out-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const store = new FileStore({ directory });
  cleanups.push(() => store.close());
  return store;
}

/** Two tokens of the same user (a refreshed one replaces the first); the server logs what it was sent. */
const TOKENS: Record<string, { userId: string }> = {
  'Bearer ann-1': { userId: 'ann' },
  'Bearer ann-2': { userId: 'ann' },
};

/** The remote billing desk, served by `a2aApp` with `authenticate` on 127.0.0.1 (FileStore). */
async function startRemote(ledger: RefundLedger) {
  const store = await tempStore();
  const seen: string[] = [];
  const authenticate: A2AAuthenticate = (request) => {
    const header = request.headers.get('authorization') ?? '';
    seen.push(header);
    return TOKENS[header];
  };
  const served = await serveA2A(billingDesk(store, ledger), 0, { authenticate });
  cleanups.push(() => served.close());
  return { served, store, seen };
}

/** The local desk whose billing specialist is the remote agent, reached with `auth`. */
async function startLocal(url: string, auth: Pick<A2AExecutorOptions, 'headers' | 'fetch'>) {
  const store = await tempStore();
  const billing = new A2AExecutor({ name: 'billing', description: 'Refunds (remote).', url, ...auth });
  return { store, desk: refundDesk(store, billing) };
}

/** Runs a turn; returns the assistant replies with text, or the error it failed with. */
async function turn(session: HandoffSession, text: string): Promise<string[] | unknown> {
  const replies: string[] = [];
  try {
    for await (const event of session.send(text)) {
      if (event.type === 'message' && event.message.role === 'assistant' && event.message.content !== '')
        replies.push(event.message.content);
    }
  } catch (error) {
    return error;
  }
  return replies;
}

describe('A2AExecutor with credentials: a Baton workflow calls an authenticated Baton A2A agent', () => {
  it('sends the token from the headers function on every turn (a refreshed token on the later one)', async () => {
    const ledger: RefundLedger = [];
    const remote = await startRemote(ledger);
    let token = 'ann-1';
    let calls = 0;
    const headers = async () => {
      calls += 1;
      return { authorization: `Bearer ${token}` };
    };
    const local = await startLocal(remote.served.url, { headers });
    const session = await local.desk.session({ id: 'chat-1' });

    // Turn 1: the remote refund waits for approval (input-required), reached with ann-1.
    expect(await turn(session, 'I was charged twice for order 1234')).toEqual([]);
    expect(session.pendingRequests).toMatchObject([{ type: 'user_input', agent: 'billing' }]);
    const callsAfterFirst = calls;
    expect(callsAfterFirst).toBeGreaterThan(0);
    expect(remote.seen.filter((h) => h !== '')).toContain('Bearer ann-1');

    // The token is refreshed; turn 2 (the approval) reaches the same remote task with the new one.
    token = 'ann-2';
    const before = remote.seen.length;
    expect(await turn(session, 'yes')).toEqual(['Done: Refunded 40 EUR.']);
    expect(calls).toBeGreaterThan(callsAfterFirst);
    expect(remote.seen.slice(before)).toEqual(['Bearer ann-2']);
    expect(ledger).toEqual([40]);
    expect(session.pendingRequests).toEqual([]);
    // The remote session is ann's.
    const sessions = await remote.store.listSessions({});
    expect(sessions.filter((s) => s.id.startsWith('billing-desk:')).map((s) => s.userId)).toEqual(['ann']);
  }, 60_000);

  it('a missing or bad token: RemoteExecutorError, HTTP 401, naming the agent and the fix', async () => {
    const remote = await startRemote([]);
    for (const auth of [{}, { headers: { authorization: 'Bearer forged' } }]) {
      const local = await startLocal(remote.served.url, auth);
      const session = await local.desk.session({ id: 'chat-2' });
      const error = await turn(session, 'I was charged twice');
      expect(error).toBeInstanceOf(RemoteExecutorError);
      expect(error).toMatchObject({ failure: 'status', status: 401, url: remote.served.url });
      const message = (error as RemoteExecutorError).message;
      expect(message).toContain('"billing"');
      expect(message).toContain(remote.served.url);
      expect(message).toContain('headers');
    }
    // The remote side made no session and ran nothing.
    expect((await remote.store.listSessions({})).filter((s) => s.id.startsWith('billing-desk:'))).toEqual([]);
  }, 60_000);

  it('an answer refused (expired token) is kept, and resume sends it once, with a good token', async () => {
    const ledger: RefundLedger = [];
    const remote = await startRemote(ledger);
    let token = 'ann-1';
    const local = await startLocal(remote.served.url, { headers: () => ({ authorization: `Bearer ${token}` }) });
    let session = await local.desk.session({ id: 'chat-3' });
    expect(await turn(session, 'I was charged twice')).toEqual([]);
    const [request] = session.pendingRequests;
    expect(request?.type).toBe('user_input');

    token = 'expired';
    const error = await turn(session, 'yes');
    expect(error).toBeInstanceOf(RemoteExecutorError);
    expect(error).toMatchObject({ status: 401 });
    expect(ledger).toEqual([]);

    // The answer is kept (a pending write), not sent: with a fresh token, `resume` finishes the turn.
    token = 'ann-2';
    session = await local.desk.session({ id: 'chat-3' });
    expect(session.routingState).toBe('running'); // the failed turn, unfinished
    const replies: string[] = [];
    for await (const event of session.resume()) {
      if (event.type === 'message' && event.message.role === 'assistant' && event.message.content !== '')
        replies.push(event.message.content);
    }
    expect(replies).toEqual(['Done: Refunded 40 EUR.']);
    expect(ledger).toEqual([40]);
    const messages = await local.store.readMessages('chat-3', 'main');
    const answers = messages.filter((m) => m.role === 'tool' && m.toolName === 'request_user_input');
    const asked = messages.flatMap((m) => m.toolCalls ?? []).filter((c) => c.name === 'request_user_input');
    expect(asked).toHaveLength(1);
    expect(answers.map((m) => [m.toolCallId, m.content])).toEqual([[asked[0]?.id, 'yes']]);
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['I was charged twice']);
  }, 60_000);

  it("takes the SDK's authenticating fetch: a 401 is retried with the handler's new token", async () => {
    const remote = await startRemote([]);
    let refreshed = 0;
    const authFetch = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ authorization: 'Bearer stale' }),
      shouldRetryWithHeaders: async (_init, response) => {
        if (response.status !== 401) return undefined;
        refreshed += 1;
        return { authorization: 'Bearer ann-2' };
      },
    });
    const local = await startLocal(remote.served.url, { fetch: authFetch });
    const session = await local.desk.session({ id: 'chat-4' });
    expect(await turn(session, 'I was charged twice')).toEqual([]);
    expect(session.pendingRequests).toMatchObject([{ type: 'user_input', agent: 'billing' }]);
    expect(refreshed).toBeGreaterThan(0);
  }, 60_000);
});
