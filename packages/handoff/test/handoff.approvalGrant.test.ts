import { ConcurrencyError, FileStore, InvalidInputError, type Message, type Store, tool } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder, type HandoffSession, type RequestAnswer, sessionTimeline } from '../src/index.js';
import { collect, danglingToolCalls, lastOf, ofType, scriptedAgent, tempDir } from './support/helpers.js';

/**
 * One `clerk` agent whose tools need a human's approval: `refund` always, `close_account` always,
 * `transfer` only above 100 (a `needsApproval` function). A user message `refund 40` calls refund
 * with 40, `refund 40 and 50` calls it twice in one step, `close` (also after amounts) closes the
 * account, `transfer N` transfers. `ran` records every real run, in every "process" built on the same array.
 */
function clerkDesk(store: Store, ran: string[]) {
  const refund = tool({
    name: 'refund',
    description: 'Refunds an amount.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      ran.push(`refund ${amount}`);
      return `Refunded ${amount}.`;
    },
  });
  const closeAccount = tool({
    name: 'close_account',
    description: 'Closes the account.',
    parameters: z.object({}),
    needsApproval: true,
    execute: () => {
      ran.push('close_account');
      return 'Closed.';
    },
  });
  const transfer = tool({
    name: 'transfer',
    description: 'Transfers an amount.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: ({ amount }) => amount > 100,
    execute: ({ amount }) => {
      ran.push(`transfer ${amount}`);
      return `Transferred ${amount}.`;
    },
  });
  const clerk = scriptedAgent(
    'clerk',
    (request) => {
      const last = lastOf(request);
      const result = request.messages.findLast((m) => m.role === 'tool');
      if (last?.role !== 'user') return { text: `Done: ${result?.content}` };
      const text = last.content;
      const amounts = [...text.matchAll(/\d+/g)].map((m) => Number(m[0]));
      const name = text.startsWith('transfer') ? 'transfer' : 'refund';
      const calls: { name: string; arguments: Record<string, unknown> }[] = amounts.map((amount) => ({
        name,
        arguments: { amount },
      }));
      if (text.includes('close')) calls.push({ name: 'close_account', arguments: {} });
      // Call ids from the turn's place in the history: the same in every process.
      const turn = request.messages.filter((m) => m.role === 'user').length;
      return { toolCalls: calls.map((call, i) => ({ id: `t${turn}_${i}`, ...call })) };
    },
    [refund, closeAccount, transfer],
  );
  const workflow = new HandoffBuilder({ name: 'clerk' }).participants(clerk).store(store).build();
  return { workflow, store };
}

/** The tool results of `messages` for `toolName`, oldest first. */
function resultsOf(messages: readonly Message[], toolName: string): Message[] {
  return messages.filter((m) => m.role === 'tool' && m.toolName === toolName);
}

/** Sends `text` and approves the one request it raises with `answer`; returns the session. */
async function sendAndApprove(session: HandoffSession, text: string, answer: RequestAnswer): Promise<void> {
  await collect(session.send(text));
  const [request] = session.pendingRequests;
  expect(request).toMatchObject({ type: 'tool_approval' });
  await collect(session.respond(request!.id, answer));
}

describe('"always allow": standing approvals for the session', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('after always: "session" and a restart, the tool runs unasked; its result records the grant', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const first = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await first.workflow.session({ id: 'grant-1', userId: 'u-1' });
    await sendAndApprove(session, 'refund 40', { approved: true, always: 'session' });
    expect(ran).toEqual(['refund 40']);
    const grant = { toolName: 'refund', scope: 'session', agent: 'clerk' };
    expect(session.approvalGrants).toEqual([expect.objectContaining(grant)]);
    const [granted] = resultsOf(session.messages, 'refund');
    const answeredRequest = { type: 'tool_approval', approved: true, always: 'session' };
    expect(granted?.metadata).toMatchObject({ answeredRequest });
    expect(granted?.metadata?.approvalGrant).toBeUndefined();
    await first.store.close();

    // A new process: a new store object and workflow on the same folder.
    const second = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const reopened = await second.workflow.session({ id: 'grant-1', userId: 'u-1' });
    expect(reopened.approvalGrants.map((g) => g.toolName)).toEqual(['refund']);
    const events = await collect(reopened.send('refund 25'));
    expect(ofType(events, 'request')).toEqual([]);
    expect(reopened.pendingRequests).toEqual([]);
    expect(ran).toEqual(['refund 40', 'refund 25']);
    const stored = await second.store.readMessages('grant-1', 'main');
    const later = resultsOf(stored, 'refund')[1];
    expect(later).toMatchObject({ content: 'Refunded 25.', isError: false });
    expect(later?.metadata?.approvalGrant).toEqual(reopened.approvalGrants[0]);
    const grantingRequest = granted?.metadata?.answeredRequest as { id: string };
    expect(later?.metadata?.approvalGrant).toMatchObject({ requestId: grantingRequest.id });
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'Done: Refunded 25.' });
    expect(danglingToolCalls(stored)).toEqual([]);
    const requests = (await sessionTimeline(second.store, 'grant-1')).entries.filter((e) => e.kind === 'request');
    expect(requests.map((e) => e.kind === 'request' && e.answer)).toEqual(['approved, always for this session']);

    // A different tool still asks; so does the same tool in another session of the same store.
    await collect(reopened.send('close'));
    expect(reopened.pendingRequests).toEqual([expect.objectContaining({ toolName: 'close_account' })]);
    await collect(reopened.respond(reopened.pendingRequests[0]!.id, { approved: false, reason: 'no' }));
    const other = await second.workflow.session({ id: 'grant-1-other', userId: 'u-1' });
    await collect(other.send('refund 10'));
    expect(other.pendingRequests).toEqual([expect.objectContaining({ toolName: 'refund' })]);
    expect(other.approvalGrants).toEqual([]);
    const otherTenant = await second.workflow.session({ id: 'grant-1-t2', tenantId: 't-2', userId: 'u-1' });
    await collect(otherTenant.send('refund 10'));
    expect(otherTenant.pendingRequests).toEqual([expect.objectContaining({ toolName: 'refund' })]);
    expect(ran).toEqual(['refund 40', 'refund 25']);
    await second.store.close();
  });

  it('revokeApproval: the next call asks again, also after a restart; revoking nothing is false', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const first = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await first.workflow.session({ id: 'grant-2' });
    await sendAndApprove(session, 'refund 40', { approved: true, always: 'session' });
    expect(await session.revokeApproval('close_account')).toBe(false);
    expect(await session.revokeApproval('refund')).toBe(true);
    expect(session.approvalGrants).toEqual([]);
    await expect(session.revokeApproval('' as string)).rejects.toThrow(InvalidInputError);
    await first.store.close();

    const second = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const reopened = await second.workflow.session({ id: 'grant-2' });
    expect(reopened.approvalGrants).toEqual([]);
    await collect(reopened.send('refund 30'));
    expect(reopened.pendingRequests).toEqual([expect.objectContaining({ toolName: 'refund' })]);
    expect(ran).toEqual(['refund 40']);
    // Granted again, then used: the grant is back until revoked again.
    await collect(reopened.respond(reopened.pendingRequests[0]!.id, { approved: true, always: 'session' }));
    await collect(reopened.send('refund 5'));
    expect(ran).toEqual(['refund 40', 'refund 30', 'refund 5']);
    await second.store.close();
  });

  it('refuses always with a rejection or another scope; the request stays; rejecting grants nothing', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const desk = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await desk.workflow.session({ id: 'grant-3' });
    await collect(session.send('refund 40'));
    const [request] = session.pendingRequests;
    const rejectAlways = collect(session.respond(request!.id, { approved: false, always: 'session' } as never));
    await expect(rejectAlways).rejects.toThrow(InvalidInputError);
    await expect(rejectAlways).rejects.toThrow(/approved: true/);
    const userScope = collect(session.respond(request!.id, { approved: true, always: 'user' } as never));
    await expect(userScope).rejects.toThrow(/always must be 'session'/);
    expect(session.pendingRequests.map((r) => r.id)).toEqual([request!.id]);
    await collect(session.respond(request!.id, { approved: false, reason: 'not today' }));
    expect(session.approvalGrants).toEqual([]);
    await collect(session.send('refund 40'));
    expect(session.pendingRequests).toHaveLength(1);
    expect(ran).toEqual([]);
    await desk.store.close();
  });

  it('in one step: a call rejected stays rejected; "always" answers the other pending calls of that tool', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const desk = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await desk.workflow.session({ id: 'grant-4' });
    await collect(session.send('refund 10 and 20 and 30'));
    const [first, second, third] = session.pendingRequests;
    const asked = session.pendingRequests.map((r) => r.type === 'tool_approval' && r.arguments);
    expect(asked).toEqual(['{"amount":10}', '{"amount":20}', '{"amount":30}']);
    await collect(session.respond(first!.id, { approved: false, reason: 'too small' }));
    expect(session.pendingRequests.map((r) => r.id)).toEqual([second!.id, third!.id]);
    await collect(session.respond(second!.id, { approved: true, always: 'session' }));

    expect(session.pendingRequests).toEqual([]);
    expect(ran).toEqual(['refund 20', 'refund 30']);
    const results = resultsOf(session.messages, 'refund');
    expect(results.map((m) => [m.content, m.isError === true])).toEqual([
      ['Error: a human rejected this call to refund: too small', true],
      ['Refunded 20.', false],
      ['Refunded 30.', false],
    ]);
    expect(results[2]?.metadata?.approvalGrant).toMatchObject({ toolName: 'refund', requestId: second!.id });
    expect(results[1]?.metadata?.approvalGrant).toBeUndefined();
    expect(session.routingState).toBe('idle');
    expect(danglingToolCalls(session.messages)).toEqual([]);
    await desk.store.close();
  });

  it('a needsApproval function still decides per call; a grant covers the calls it would ask for', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const desk = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await desk.workflow.session({ id: 'grant-5' });
    await collect(session.send('transfer 50'));
    expect(session.pendingRequests).toEqual([]);
    await sendAndApprove(session, 'transfer 500', { approved: true, always: 'session', arguments: { amount: 400 } });
    await collect(session.send('transfer 900'));
    await collect(session.send('transfer 60'));
    expect(session.pendingRequests).toEqual([]);
    expect(ran).toEqual(['transfer 50', 'transfer 400', 'transfer 900', 'transfer 60']);
    const results = resultsOf(session.messages, 'transfer');
    expect(results[1]?.metadata).toMatchObject({
      approvedArguments: { amount: 400 },
      answeredRequest: { always: 'session' },
    });
    expect(results[2]?.metadata?.approvalGrant).toMatchObject({ toolName: 'transfer' });
    // Below the threshold no approval was needed, so no grant was used.
    expect(results[3]?.metadata?.approvalGrant).toBeUndefined();
    await desk.store.close();
  });

  it('is durable before the tool runs: a turn left after the answer finishes in a new process, granted', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const first = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await first.workflow.session({ id: 'grant-6' });
    await collect(session.send('refund 40'));
    const stream = session.respond(session.pendingRequests[0]!.id, { approved: true, always: 'session' });
    // Leave at the checkpoint the grant saved: the turn stops before the tool runs.
    for await (const event of stream) if (event.type === 'checkpoint') break;
    expect(ran).toEqual([]);
    await first.store.close();

    const second = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const reopened = await second.workflow.session({ id: 'grant-6' });
    expect(reopened.approvalGrants.map((g) => g.toolName)).toEqual(['refund']);
    const events = await collect(reopened.resume());
    expect(ofType(events, 'request')).toEqual([]);
    expect(ran).toEqual(['refund 40']);
    expect(resultsOf(reopened.messages, 'refund')[0]?.metadata?.approvalGrant).toMatchObject({ toolName: 'refund' });
    expect(danglingToolCalls(await second.store.readMessages('grant-6', 'main'))).toEqual([]);
    await second.store.close();
  });

  it('belongs to the session: a fork sees it; revoked while a turn is paused, it stays revoked', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const first = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await first.workflow.session({ id: 'grant-7', branch: 'main' });
    await sendAndApprove(session, 'refund 40', { approved: true, always: 'session' });
    const fork = await session.fork({ atSeq: session.messages.at(-1)!.seq, branchId: 'retry' });
    expect(fork.approvalGrants.map((g) => g.toolName)).toEqual(['refund']);
    await collect(fork.send('refund 15'));
    expect(fork.pendingRequests).toEqual([]);
    expect(ran).toEqual(['refund 40', 'refund 15']);

    // Paused on another tool's approval, the grant is revoked: saved with the unfinished turn.
    await collect(session.send('close'));
    expect(session.routingState).toBe('awaitingRequest');
    expect(await session.revokeApproval('refund')).toBe(true);
    await first.store.close();

    const second = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const reopened = await second.workflow.session({ id: 'grant-7', branch: 'main' });
    expect(reopened.approvalGrants).toEqual([]);
    await collect(reopened.respond(reopened.pendingRequests[0]!.id, { approved: true }));
    expect(ran).toEqual(['refund 40', 'refund 15', 'close_account']);
    const third = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const again = await third.workflow.session({ id: 'grant-7', branch: 'main' });
    expect(again.approvalGrants).toEqual([]);
    await collect(again.send('refund 5'));
    expect(again.pendingRequests).toEqual([expect.objectContaining({ toolName: 'refund' })]);
    await second.store.close();
    await third.store.close();
  });

  it('granted and revoked in one paused turn: the revoke wins after a restart (recovery applies both)', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const first = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await first.workflow.session({ id: 'grant-8' });
    await collect(session.send('refund 40 and close'));
    const [refund, close] = session.pendingRequests;
    await collect(session.respond(refund!.id, { approved: true, always: 'session' }));
    expect(ran).toEqual(['refund 40']);
    expect(session.pendingRequests.map((r) => r.id)).toEqual([close!.id]);
    expect(await session.revokeApproval('refund')).toBe(true);
    await first.store.close();

    const second = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const reopened = await second.workflow.session({ id: 'grant-8' });
    expect(reopened.approvalGrants).toEqual([]);
    await collect(reopened.respond(close!.id, { approved: true }));
    expect(reopened.approvalGrants).toEqual([]);
    await collect(reopened.send('refund 7'));
    expect(reopened.pendingRequests).toEqual([expect.objectContaining({ toolName: 'refund' })]);
    expect(ran).toEqual(['refund 40', 'close_account']);
    await second.store.close();
  });

  it('a revoke in another process is seen by a session object opened before it: the next call asks', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ran: string[] = [];
    const one = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const two = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const session = await one.workflow.session({ id: 'grant-9' });
    await sendAndApprove(session, 'refund 40', { approved: true, always: 'session' });
    // Process two opens the session while the grant holds, then process one revokes it.
    const early = await two.workflow.session({ id: 'grant-9' });
    expect(early.approvalGrants.map((g) => g.toolName)).toEqual(['refund']);
    expect(await session.revokeApproval('refund')).toBe(true);

    await collect(early.send('refund 5 and 6'));
    expect(early.pendingRequests).toEqual([expect.objectContaining({ toolName: 'refund' }), expect.anything()]);
    expect(ran).toEqual(['refund 40']);
    // Its own new grant holds for the sibling call although the stored session changed since it loaded;
    // settling that turn then meets the other writer's change (ConcurrencyError), and a call again settles it.
    const [first] = early.pendingRequests;
    const answered = collect(early.respond(first!.id, { approved: true, always: 'session' }));
    await expect(answered).rejects.toThrow(ConcurrencyError);
    expect(ran).toEqual(['refund 40', 'refund 5', 'refund 6']);
    await collect(early.resume());
    expect(early.pendingRequests).toEqual([]);
    const three = clerkDesk(new FileStore({ directory: dir.path }), ran);
    const reread = await three.workflow.session({ id: 'grant-9' });
    expect(reread.approvalGrants).toEqual([expect.objectContaining({ toolName: 'refund', requestId: first!.id })]);
    await three.store.close();
    await one.store.close();
    await two.store.close();
  });
});
