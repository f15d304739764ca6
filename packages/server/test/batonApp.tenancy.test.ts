import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

describe('the auth hook keeps tenants (and users) apart', () => {
  it("another tenant's token gets 404 on every route of the session, and changes nothing", async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url, 'Bearer acme-ann');
      const gil = client(server.url, 'Bearer globex-gil');
      await ann.json('POST', '/sessions', { id: 'acme-chat' });
      const asked = await ann.json('POST', '/sessions/acme-chat/messages', { text: 'I was charged twice' });
      const requestId = asked.body.pendingRequests[0].id;

      const attempts = [
        await gil.json('GET', '/sessions/acme-chat'),
        await gil.json('GET', '/sessions/acme-chat/messages'),
        await gil.json('GET', '/sessions/acme-chat/branches'),
        await gil.json('GET', '/sessions/acme-chat/timeline'),
        await gil.json('POST', '/sessions/acme-chat/messages', { text: 'let me in' }),
        await gil.json('POST', `/sessions/acme-chat/requests/${requestId}`, { text: '9999' }),
        await gil.json('POST', '/sessions/acme-chat/close', {}),
        await gil.json('POST', '/sessions/acme-chat/fork', { branchId: 'mine', atSeq: 0 }),
        await gil.json('GET', '/sessions/acme-chat/events?lastEventId=acme-chat/main/0.0'),
      ];
      for (const attempt of attempts) {
        expect(attempt.status).toBe(404);
        expect(attempt.body.error).toEqual({
          code: 'NOT_FOUND',
          message: expect.stringContaining('"acme-chat" does not exist'),
        });
      }
      // Taking the id is refused without telling whose it is.
      const taken = await gil.json('POST', '/sessions', { id: 'acme-chat' });
      expect(taken.status).toBe(409);
      expect(taken.body.error.message).not.toMatch(/tenant|ann/);

      const mine = await ann.json('GET', '/sessions/acme-chat');
      expect(mine.body).toMatchObject({
        status: 'active',
        routingState: 'awaitingRequest',
        pendingRequests: [{ id: requestId }],
      });
      expect((await ann.json('GET', '/sessions/acme-chat/messages')).body.messages).toHaveLength(4);
      expect((await ann.json('GET', '/sessions/acme-chat/branches')).body.branches).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('another user of the same tenant gets 404 too; a request without a known token gets 401', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url, 'Bearer acme-ann');
      await ann.json('POST', '/sessions', { id: 'ann-chat' });
      const bob = await client(server.url, 'Bearer acme-bob').json('GET', '/sessions/ann-chat');
      expect(bob.status).toBe(404);
      const nobody = await client(server.url, 'Bearer forged').json('GET', '/sessions/ann-chat');
      expect(nobody.status).toBe(401);
      expect(nobody.body.error.code).toBe('UNAUTHENTICATED');
      const none = await fetch(`${server.url}/sessions/ann-chat`);
      expect(none.status).toBe(401);
    } finally {
      await server.close();
    }
  });
});
