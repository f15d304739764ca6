import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { agentCardHandler, restHandler } from '@a2a-js/sdk/server/express';
import {
  type A2AAuthenticate,
  A2AExecutor,
  a2aAuthentication,
  a2aRequestHandler,
  userMessage,
  workflowAgentCard,
} from '@baton/a2a';
import { FileStore, RemoteExecutorError } from '@baton/core';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { billingDesk, type RefundLedger, refundDesk } from './support/refundDesk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempStore(): Promise<FileStore> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-a2a-rest-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const store = new FileStore({ directory });
  cleanups.push(() => store.close());
  return store;
}

const authenticate: A2AAuthenticate = (request) =>
  request.headers.get('authorization') === 'Bearer ann-token' ? { userId: 'ann' } : undefined;

/**
 * The billing desk served over the SDK's REST (HTTP+JSON) transport on 127.0.0.1: `a2aRequestHandler`
 * behind `a2aAuthentication`'s middleware at `/rest`, its card (public) declaring only that interface.
 */
async function serveRest(ledger: RefundLedger) {
  const store = await tempStore();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const desk = billingDesk(store, ledger);
  const card = workflowAgentCard(desk, { url: `${url}/rest`, legacyCompat: false });
  card.supportedInterfaces = [
    { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
  ];
  const requestHandler = a2aRequestHandler(desk, { url: `${url}/rest`, agentCard: card, authenticate });
  const auth = a2aAuthentication(authenticate);
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use('/rest', auth.middleware, restHandler({ requestHandler, userBuilder: auth.userBuilder }));
  server.on('request', app);
  return { url, store };
}

describe('a2aRequestHandler on the SDK REST transport with a2aAuthentication (127.0.0.1)', () => {
  it('answers 401 without the token; with it an A2AExecutor completes a task through input-required', async () => {
    const ledger: RefundLedger = [];
    const { url, store } = await serveRest(ledger);

    // The SDK's client picks REST from the card; without a token the call is refused with 401.
    const anonymous = await new ClientFactory().createFromUrl(url);
    const refused = anonymous.sendMessage({
      tenant: '',
      message: userMessage('Refund 40 EUR'),
      configuration: undefined,
      metadata: undefined,
    });
    await expect(refused).rejects.toThrow('The request carries no credentials the A2A agent accepts.');
    const raw = await fetch(`${url}/rest/message:send`, { method: 'POST', body: '{}' });
    expect(raw.status).toBe(401);

    // A Baton desk whose billing specialist is that agent, reached over REST with ann's token.
    const billing = new A2AExecutor({
      name: 'billing',
      description: 'Refunds (remote, REST).',
      url,
      headers: { authorization: 'Bearer ann-token' },
    });
    const local = refundDesk(await tempStore(), billing);
    const session = await local.session({ id: 'chat-rest' });
    await session.send('I was charged twice');
    expect(session.pendingRequests).toMatchObject([{ type: 'user_input', agent: 'billing' }]);
    const done = await session.send('yes');
    expect(done.message?.content).toBe('Done: Refunded 40 EUR.');
    expect(ledger).toEqual([40]);
    const sessions = (await store.listSessions({})).filter((s) => s.id.startsWith('billing-desk:'));
    expect(sessions.map((s) => s.userId)).toEqual(['ann']);

    // The same desk with a forged token: the named error.
    const forged = new A2AExecutor({
      name: 'billing',
      description: 'Refunds (remote, REST).',
      url,
      headers: { authorization: 'Bearer forged' },
    });
    const other = await refundDesk(await tempStore(), forged).session({ id: 'chat-forged' });
    await expect(other.send('I was charged twice')).rejects.toMatchObject({
      constructor: RemoteExecutorError,
      status: 401,
    });
  }, 60_000);
});
