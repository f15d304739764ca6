import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

describe('a whole conversation over HTTP (real server on 127.0.0.1)', () => {
  it('create → message (handoff, user-input request) → answer (approval request) → approve → close, streamed as SSE', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      const created = await ann.json('POST', '/sessions', {});
      expect(created.status).toBe(201);
      const id: string = created.body.id;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.body).toMatchObject({
        tenantId: 'acme',
        userId: 'ann',
        status: 'active',
        routingState: 'idle',
        pendingRequests: [],
      });

      const first = await ann.stream('POST', `/sessions/${id}/messages`, { text: 'I was charged twice' });
      expect(first.status).toBe(200);
      expect(first.contentType).toContain('text/event-stream');
      const types = first.events.map((e) => e.event);
      expect(types[0]).toBe('turn.started');
      expect(types).toContain('handoff');
      expect(types.at(-1)).toBe('turn.completed');
      expect(first.events.find((e) => e.event === 'handoff')!.data).toMatchObject({
        from: 'triage',
        to: 'billing',
        reason: 'a refund',
      });
      const question = first.events.find((e) => e.event === 'request')!.data.request;
      expect(question).toMatchObject({ type: 'user_input', agent: 'billing', prompt: 'What is your order number?' });
      for (const event of first.events) expect(event.data.type).toBe(event.event);
      expectIncreasingIds(
        first.events.map((e) => e.id),
        id,
      );

      const info = await ann.json('GET', `/sessions/${id}`);
      expect(info.body).toMatchObject({
        routingState: 'awaitingRequest',
        activeAgent: 'billing',
        pendingRequests: [{ id: question.id, type: 'user_input' }],
      });

      const second = await ann.stream('POST', `/sessions/${id}/requests/${question.id}`, { text: '1234' });
      const approval = second.events.find((e) => e.event === 'request')!.data.request;
      expect(approval).toMatchObject({
        type: 'tool_approval',
        toolName: 'refund',
        arguments: '{"orderId":"1234","amount":40}',
      });
      expect(
        second.events
          .filter((e) => e.event === 'message.delta')
          .map((e) => e.data.delta)
          .join(''),
      ).toBe('Let me refund that.');
      expect(server.refunds).toEqual([]);

      const third = await ann.stream('POST', `/sessions/${id}/requests/${approval.id}`, { approved: true });
      expect(server.refunds).toEqual(['1234:40']);
      const deltas = third.events.filter((e) => e.event === 'message.delta');
      expect(deltas.length).toBeGreaterThan(3);
      const answer = third.events.findLast((e) => e.event === 'message')!.data.message;
      expect(answer).toMatchObject({
        role: 'assistant',
        agent: 'billing',
        content: 'All done. Refunded 40 EUR for order 1234. Anything else I can do for you today?',
      });
      expect(deltas.map((e) => e.data.delta).join('')).toBe(answer.content);
      expectIncreasingIds(
        [...first.events, ...second.events, ...third.events].map((e) => e.id),
        id,
      );

      const messages = await ann.json('GET', `/sessions/${id}/messages`);
      expect(messages.body.messages.map((m: { role: string }) => m.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
        'tool',
        'assistant',
        'tool',
        'assistant',
      ]);
      const tail = await ann.json('GET', `/sessions/${id}/messages?fromSeq=7`);
      expect(tail.body.messages.map((m: { seq: number }) => m.seq)).toEqual([7, 8]);

      const closed = await ann.json('POST', `/sessions/${id}/close`, { reason: 'resolved' });
      expect(closed.body).toMatchObject({ status: 'closed', closedReason: 'resolved', routingState: 'closed' });
      const after = await ann.json('POST', `/sessions/${id}/messages`, { text: 'one more thing' });
      expect(after.status).toBe(410);
      expect(after.body.error).toMatchObject({ code: 'SESSION_CLOSED' });
    } finally {
      await server.close();
    }
  });

  it('a supervisor rejects the refund with a reason: the tool never runs and the agent reads the reason', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      await ann.json('POST', '/sessions', { id: 'reject-1' });
      const asked = await ann.json('POST', '/sessions/reject-1/messages', { text: 'Refund please' });
      const approval = await ann.json('POST', `/sessions/reject-1/requests/${asked.body.pendingRequests[0].id}`, {
        text: '1234',
      });
      const rejected = await ann.stream('POST', `/sessions/reject-1/requests/${approval.body.pendingRequests[0].id}`, {
        approved: false,
        reason: 'duplicate claim',
      });
      expect(server.refunds).toEqual([]);
      const result = rejected.events.find((e) => e.event === 'tool.result' && e.data.toolName === 'refund')!.data;
      expect(result.isError).toBe(true);
      expect(result.content).toContain('duplicate claim');
      expect(rejected.events.at(-1)!.event).toBe('turn.completed');
      expect((await ann.json('GET', '/sessions/reject-1')).body).toMatchObject({
        routingState: 'idle',
        pendingRequests: [],
      });
    } finally {
      await server.close();
    }
  });

  it('Accept: application/json awaits the turn and answers with its TurnResult', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      const id = (await ann.json('POST', '/sessions', { id: 'json-1' })).body.id;
      const turn = await ann.json('POST', `/sessions/${id}/messages`, { text: 'Refund please' });
      expect(turn.status).toBe(200);
      expect(turn.body).toMatchObject({
        sessionId: 'json-1',
        branchId: 'main',
        completed: true,
        nextAgent: 'billing',
        pendingRequests: [{ type: 'user_input' }],
      });
      expect(turn.body.messages.map((m: { role: string }) => m.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
      ]);
    } finally {
      await server.close();
    }
  });

  it('branches: fork at a seq, list, and a turn on the fork leaves main as it was', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      await ann.json('POST', '/sessions', { id: 'fork-1' });
      await ann.stream('POST', '/sessions/fork-1/messages', { text: 'Refund please' });
      const fork = await ann.json('POST', '/sessions/fork-1/fork', { branchId: 'retry', atSeq: 0 });
      expect(fork.status).toBe(201);
      expect(fork.body).toMatchObject({ branchId: 'retry', headSeq: 0, routingState: 'idle' });
      const branches = await ann.json('GET', '/sessions/fork-1/branches');
      expect(branches.body.branches.map((b: { id: string }) => b.id).sort()).toEqual(['main', 'retry']);
      const onFork = await ann.stream('POST', '/sessions/fork-1/messages?branch=retry', { text: 'Another question' });
      expect(onFork.events[0]!.id).toBe('fork-1/retry/1:0.1'); // the fork's first turn: lease epoch 1
      const retry = await ann.json('GET', '/sessions/fork-1/messages?branch=retry');
      expect(retry.body.messages[0]).toMatchObject({ seq: 1, content: 'Another question' });
      const main = await ann.json('GET', '/sessions/fork-1/messages');
      expect(main.body.messages[0]).toMatchObject({ seq: 1, content: 'Refund please' });
      expect(main.body.messages).toHaveLength(4);
    } finally {
      await server.close();
    }
  });
});

/** Event ids name the session and main branch and strictly increase as (epoch, seq, index) triples. */
function expectIncreasingIds(ids: readonly string[], sessionId: string): void {
  const positions = ids.map((id) => {
    const [session, branch, position] = id.split('/');
    expect(session).toBe(sessionId);
    expect(branch).toBe('main');
    const [epoch, pair] = position!.includes(':') ? position!.split(':') : ['0', position!];
    const [seq, index] = pair!.split('.').map(Number);
    return [Number(epoch), seq!, index!] as const;
  });
  for (let i = 1; i < positions.length; i++) {
    const [a, b] = [positions[i - 1]!, positions[i]!];
    const after = b[0] !== a[0] ? b[0] > a[0] : b[1] !== a[1] ? b[1] > a[1] : b[2] > a[2];
    expect(after, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
  }
}
