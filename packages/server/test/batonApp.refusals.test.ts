/**
 * What `POST /sessions` answers for metadata the store refuses, and what a message sent while an
 * approval waits is told: a 400 naming the field or the route, never a 409 for a free id or a 5xx.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, InMemoryStore, MAX_METADATA_DEPTH, type Store } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

/** A JSON body `{ id, metadata }` with the metadata as raw JSON text (so a `"__proto__"` key is sent as written). */
const body = (id: string, metadata: string) => `{"id":${JSON.stringify(id)},"metadata":${metadata}}`;

const stores: [string, () => Promise<{ store: Store; dispose(): Promise<void> }>][] = [
  ['InMemoryStore', async () => ({ store: new InMemoryStore(), dispose: async () => undefined })],
  [
    'FileStore',
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'baton-server-metadata-'));
      return { store: new FileStore({ directory }), dispose: () => rm(directory, { recursive: true, force: true }) };
    },
  ],
];

describe.each(stores)('POST /sessions with metadata the store refuses (%s)', (_name, open) => {
  it('answers 400 naming the key ($where, a.b, __proto__ at the top or nested, constructor), and the id stays free', async () => {
    const { store, dispose } = await open();
    await using server = await startDeskServer({ store });
    try {
      const ann = client(server.url);
      const cases: [string, string][] = [
        ['{"$where":"1"}', '"$where"'],
        ['{"a.b":1}', '"a.b"'],
        ['{"profile":{"__proto__":{"admin":true}}}', '"__proto__"'],
        ['{"constructor":{"prototype":{"admin":true}}}', '"constructor"'],
        // JSON.parse keeps a top-level "__proto__" as an own key; it used to be dropped on the way and the session made (201).
        ['{"__proto__":{"admin":true},"plan":"pro"}', '"__proto__"'],
      ];
      for (const [index, [metadata, key]] of cases.entries()) {
        const id = `meta-${index}`;
        const refused = await ann.json('POST', '/sessions', body(id, metadata));
        expect(refused.status, metadata).toBe(400);
        expect(refused.body.error.code).toBe('INVALID_INPUT');
        expect(refused.body.error.message).toContain(`metadata`);
        expect(refused.body.error.message).toContain(`the key ${key}`);
        expect((await ann.json('GET', `/sessions/${id}`)).status).toBe(404);
        const created = await ann.json('POST', '/sessions', { id, metadata: { plan: 'pro' } });
        expect(created.status).toBe(201);
        expect(created.body.metadata).toEqual({ plan: 'pro' });
      }
    } finally {
      await dispose();
    }
  });

  it(`answers 400 naming the limit for metadata nested 2,000 levels deep (not 503: the store is fine)`, async () => {
    const { store, dispose } = await open();
    await using server = await startDeskServer({ store });
    try {
      const ann = client(server.url);
      const refused = await ann.json(
        'POST',
        '/sessions',
        body('deep-1', `${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}`),
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('INVALID_INPUT');
      expect(refused.body.error.message).toContain(`metadata is nested more than ${MAX_METADATA_DEPTH} levels deep`);
      expect((await ann.json('GET', '/sessions/deep-1')).status).toBe(404);
      const atLimit = `${'{"a":'.repeat(MAX_METADATA_DEPTH)}1${'}'.repeat(MAX_METADATA_DEPTH)}`;
      const created = await ann.json('POST', '/sessions', body('deep-1', atLimit));
      expect(created.status).toBe(201);
      expect(created.body.metadata).toEqual(JSON.parse(atLimit));
    } finally {
      await dispose();
    }
  });
});

describe('POST /sessions/:id/messages while an approval waits', () => {
  it('answers 400 naming the route that answers the request, its id and body; that route then continues the turn', async () => {
    await using server = await startDeskServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'wait-1' });
    const asked = await ann.json('POST', '/sessions/wait-1/messages', { text: 'I was charged twice' });
    const approval = await ann.json('POST', `/sessions/wait-1/requests/${asked.body.pendingRequests[0].id}`, {
      text: 'A-1',
    });
    const [request] = approval.body.pendingRequests;
    expect(request).toMatchObject({ type: 'tool_approval', toolName: 'refund' });

    const refused = await ann.json('POST', '/sessions/wait-1/messages', { text: 'hello?' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('INVALID_INPUT');
    expect(refused.body.error.message).toContain(
      `POST /sessions/wait-1/requests/${request.id} with { "approved": true }`,
    );
    expect(refused.body.error.message).not.toContain('session.respond');
    const chat = await ann.json('POST', '/sessions/wait-1/chat', {
      messages: [{ role: 'user', parts: [{ type: 'text', text: 'hello?' }] }],
    });
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toContain(`POST /sessions/wait-1/requests/${request.id}`);

    const answered = await ann.json('POST', `/sessions/wait-1/requests/${request.id}`, { approved: true });
    expect(answered.status).toBe(200);
    expect(answered.body.pendingRequests).toEqual([]);
    expect(server.refunds).toEqual(['A-1:40']);
  });
});
