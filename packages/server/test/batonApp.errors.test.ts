import { InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';
import { createGate, until } from './support/serverDesk.js';

describe('bad requests get named errors and change nothing', () => {
  it('malformed bodies get 400 with a message naming the field, and the zod issues', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      await ann.json('POST', '/sessions', { id: 'bad-1' });
      const cases: [string, string, unknown, string][] = [
        ['POST', '/sessions/bad-1/messages', { text: 42 }, 'text'],
        ['POST', '/sessions/bad-1/messages', {}, 'text'],
        ['POST', '/sessions/bad-1/messages', { text: 'hi', extra: true }, 'extra'],
        ['POST', '/sessions/bad-1/requests/r-1', { approved: 'yes' }, 'approved'],
        ['POST', '/sessions/bad-1/requests/r-1', { text: 'a', approved: true }, 'approved'],
        ['POST', '/sessions/bad-1/fork', { branchId: 'x', atSeq: -1 }, 'atSeq'],
        ['POST', '/sessions', { id: 7 }, 'id'],
        ['POST', '/sessions/bad-1/close', { reason: false }, 'reason'],
      ];
      for (const [method, path, body, field] of cases) {
        const response = await ann.json(method, path, body);
        expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
        expect(response.body.error.code).toBe('INVALID_BODY');
        expect(response.body.error.message).toMatch(new RegExp(`\\b${field}: `));
        expect(response.body.error.issues.some((i: { path: string[] }) => i.path.includes(field))).toBe(true);
      }
      const notJson = await ann.json('POST', '/sessions/bad-1/messages', '{"text": ');
      expect(notJson.status).toBe(400);
      expect(notJson.body.error.code).toBe('INVALID_JSON');
      const badQuery = await ann.json('GET', '/sessions/bad-1/messages?fromSeq=zero');
      expect(badQuery.status).toBe(400);
      expect(badQuery.body.error.message).toContain('fromSeq');
      const badId = await ann.json('POST', '/sessions', { id: '../etc' });
      expect(badId.status).toBe(400);
      expect(badId.body.error.code).toBe('INVALID_ID');
      expect((await ann.json('GET', '/sessions/bad-1/messages')).body.messages).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('unknown session 404, unknown request 404, an answer of the wrong kind 400, an existing id 409', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      expect((await ann.json('GET', '/sessions/nope')).status).toBe(404);
      expect((await ann.json('POST', '/sessions/nope/messages', { text: 'hi' })).status).toBe(404);
      await ann.json('POST', '/sessions', { id: 'err-2' });
      expect((await ann.json('POST', '/sessions', { id: 'err-2' })).status).toBe(409);
      const asked = await ann.json('POST', '/sessions/err-2/messages', { text: 'I was charged twice' });
      const unknown = await ann.json('POST', '/sessions/err-2/requests/r-404', { text: '1234' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message).toContain('"r-404"');
      const wrongKind = await ann.json('POST', `/sessions/err-2/requests/${asked.body.pendingRequests[0].id}`, {
        approved: true,
      });
      expect(wrongKind.status).toBe(400);
      expect(wrongKind.body.error.code).toBe('INVALID_INPUT');
      expect((await ann.json('GET', '/sessions/err-2/messages?branch=nope')).status).toBe(404);
      expect((await ann.json('POST', '/sessions/err-2/fork', { branchId: 'main', atSeq: 0 })).status).toBe(409);
    } finally {
      await server.close();
    }
  });

  it("a second turn gets 409 with ConcurrencyError's message: on this server, and on another server on the same store (its lease), before any model call", async () => {
    const store = new InMemoryStore();
    const gate = createGate();
    const one = await startDeskServer({ store, gate: gate.wait });
    const two = await startDeskServer({ store });
    try {
      const ann = client(one.url);
      await ann.json('POST', '/sessions', { id: 'race-1' });
      gate.close();
      const running = ann.json('POST', '/sessions/race-1/messages', { text: 'first' });
      await until(() => gate.waiting > 0);
      const second = await ann.json('POST', '/sessions/race-1/messages', { text: 'second' });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({
        code: 'CONCURRENCY',
        message: expect.stringContaining('A turn is running on session "race-1"'),
      });
      // Another server on the same store is refused too: the branch's lease is held by this one.
      const other = await client(two.url).json('POST', '/sessions/race-1/messages', { text: 'from elsewhere' });
      expect(other.status).toBe(409);
      expect(other.body.error).toMatchObject({
        code: 'CONCURRENCY',
        message: expect.stringContaining('follow it with GET /sessions/race-1/events'),
      });
      gate.open();
      const done = await running;
      expect(done.status).toBe(200);
      const stored = await store.readMessages('race-1', 'main', { tenantId: 'acme' });
      expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first']);
    } finally {
      gate.open();
      await one.close();
      await two.close();
    }
  });
});
