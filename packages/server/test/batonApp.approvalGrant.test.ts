import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

/** Asks for a refund of order `order` on session `id`: the approval request's id, or `refunded` when none was asked. */
async function askRefund(ann: ReturnType<typeof client>, id: string, order: string) {
  const asked = await ann.json('POST', `/sessions/${id}/messages`, { text: 'Refund please' });
  const questionId: string = asked.body.pendingRequests[0].id;
  const answered = await ann.json('POST', `/sessions/${id}/requests/${questionId}`, { text: order });
  const [approval] = answered.body.pendingRequests;
  return { approvalId: approval?.id as string | undefined, refunded: approval === undefined };
}

describe('"always allow" over HTTP (real server on 127.0.0.1, FileStore in a temp dir)', () => {
  it('always: session → after a restart the refund runs unasked; DELETE revokes it; bad bodies are 400', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-server-grant-'));
    try {
      const firstStore = new FileStore({ directory: dir });
      const first = await startDeskServer({ store: firstStore });
      const ann = client(first.url);
      await ann.json('POST', '/sessions', { id: 'grant-http' });
      const { approvalId } = await askRefund(ann, 'grant-http', '1234');

      const answerPath = `/sessions/grant-http/requests/${approvalId}`;
      const rejectAlways = await ann.json('POST', answerPath, { approved: false, always: 'session' });
      expect(rejectAlways.status).toBe(400);
      const alwaysIssue = expect.objectContaining({ path: ['always'] });
      expect(rejectAlways.body.error).toMatchObject({ code: 'INVALID_BODY', issues: [alwaysIssue] });
      const userScope = await ann.json('POST', answerPath, { approved: true, always: 'user' });
      expect(userScope.status).toBe(400);
      expect(userScope.body.error.message).toContain('always');

      const approved = await ann.stream('POST', answerPath, { approved: true, always: 'session' });
      expect(approved.events.at(-1)!.event).toBe('turn.completed');
      expect(first.refunds).toEqual(['1234:40']);
      const info = await ann.json('GET', '/sessions/grant-http');
      const grant = { toolName: 'refund', scope: 'session', requestId: approvalId, agent: 'billing' };
      expect(info.body.approvalGrants).toEqual([expect.objectContaining(grant)]);
      await first.close();
      await firstStore.close();

      // A restart: a new server and a new store object on the same folder.
      const secondStore = new FileStore({ directory: dir });
      const second = await startDeskServer({ store: secondStore });
      const again = client(second.url);
      expect((await again.json('GET', '/sessions/grant-http')).body.approvalGrants).toHaveLength(1);
      expect(await askRefund(again, 'grant-http', '5678')).toEqual({ approvalId: undefined, refunded: true });
      expect(second.refunds).toEqual(['5678:40']);
      const messages = (await again.json('GET', '/sessions/grant-http/messages')).body.messages;
      const lastRefund = messages.findLast((m: { toolName?: string }) => m.toolName === 'refund');
      expect(lastRefund.metadata.approvalGrant).toMatchObject({ toolName: 'refund', requestId: approvalId });

      // Another tenant cannot see or revoke it.
      const gil = client(second.url, 'Bearer globex-gil');
      expect((await gil.json('DELETE', '/sessions/grant-http/approval-grants/refund')).status).toBe(404);

      const revoked = await again.json('DELETE', '/sessions/grant-http/approval-grants/refund');
      expect(revoked).toEqual({ status: 200, body: { revoked: true, approvalGrants: [] } });
      const revokedAgain = await again.json('DELETE', '/sessions/grant-http/approval-grants/refund');
      expect(revokedAgain.body).toEqual({ revoked: false, approvalGrants: [] });
      const asksAgain = await askRefund(again, 'grant-http', '9999');
      expect(asksAgain.approvalId).toEqual(expect.any(String));
      expect(second.refunds).toEqual(['5678:40']);
      await second.close();
      await secondStore.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
