import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

describe('GET /sessions/:id/timeline tells the session as `baton inspect` does', () => {
  it('after a handoff, a question and an approved refund: entries in order, and the same told as text', async () => {
    await using server = await startDeskServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'told-1' });
    const asked = await ann.json('POST', '/sessions/told-1/messages', { text: 'I was charged twice' });
    const approval = await ann.json('POST', `/sessions/told-1/requests/${asked.body.pendingRequests[0].id}`, {
      text: '1234',
    });
    const pending = await ann.json('GET', '/sessions/told-1/timeline');
    expect(pending.status).toBe(200);
    expect(pending.body.entries.filter((e: { kind: string }) => e.kind === 'request').at(-1)).toMatchObject({
      request: { type: 'tool_approval', toolName: 'refund' },
    });
    await ann.json('POST', `/sessions/told-1/requests/${approval.body.pendingRequests[0].id}`, { approved: true });

    const { status, body } = await ann.json('GET', '/sessions/told-1/timeline?branch=main');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      sessionId: 'told-1',
      branchId: 'main',
      status: 'active',
      agents: ['triage', 'billing'],
      handoffs: [{ from: 'triage', to: 'billing' }],
    });
    // A turn for the message, one for the answer to the question and one for the approval.
    expect(body.counts).toMatchObject({ turns: 3, messages: 8 });
    const kinds = body.entries.map((e: { kind: string }) => e.kind);
    expect(kinds.indexOf('handoff')).toBeLessThan(kinds.lastIndexOf('reply'));
    expect(body.entries).toContainEqual(
      expect.objectContaining({ kind: 'handoff', from: 'triage', to: 'billing', reason: 'a refund' }),
    );
    expect(body.entries).toContainEqual(
      expect.objectContaining({
        kind: 'tool',
        toolName: 'refund',
        arguments: '{"orderId":"1234","amount":40}',
        isError: false,
      }),
    );
    expect(body.entries).toContainEqual(
      expect.objectContaining({
        kind: 'request',
        answer: 'approved',
        request: expect.objectContaining({ type: 'tool_approval' }),
      }),
    );
    expect(body.text).toContain('session told-1  branch main  active');
    expect(body.text).toContain('handoff triage → billing: "a refund"');
    expect(body.text).toMatch(/tool refund .*orderId/);
  });

  it("another tenant's or user's token gets 404; an unknown branch 404; a bad branch query 400", async () => {
    await using server = await startDeskServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'acme-told' });
    await ann.json('POST', '/sessions/acme-told/messages', { text: 'I was charged twice' });
    for (const token of ['Bearer globex-gil', 'Bearer acme-bob']) {
      const other = await client(server.url, token).json('GET', '/sessions/acme-told/timeline');
      expect(other.status).toBe(404);
      expect(other.body.error).toEqual({
        code: 'NOT_FOUND',
        message: expect.stringContaining('"acme-told" does not exist'),
      });
      expect(JSON.stringify(other.body)).not.toContain('charged twice');
    }
    const noBranch = await ann.json('GET', '/sessions/acme-told/timeline?branch=elsewhere');
    expect(noBranch.status).toBe(404);
    expect(noBranch.body.error.message).toContain('Branch "elsewhere"');
    const bad = await ann.json('GET', `/sessions/acme-told/timeline?branch=${'x'.repeat(200)}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_QUERY');
    expect((await client(server.url, 'Bearer forged').json('GET', '/sessions/acme-told/timeline')).status).toBe(401);
  });
});
