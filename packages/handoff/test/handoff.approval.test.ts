import { FileStore, InvalidInputError, NotFoundError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, ofType, tempDir } from './support/helpers.js';
import { approvalDesk } from './support/scenarioDesks.js';

/** A process's view of the desk: a new FileStore over the same folder, new agents, a new workflow. */
function openDesk(directory: string, refunds: string[], askToo = false) {
  return approvalDesk(new FileStore({ directory }), refunds, askToo);
}

describe('tool approval across a restore (Done-when 7)', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('pauses on a tool_approval request; approved after a restore, the tool runs once', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const refunds: string[] = [];
    const first = openDesk(dir.path, refunds);
    const session = await first.workflow.session({ id: 'a-1' });
    const events = await collect(session.send('Refund my double charge'));
    const [request] = ofType(events, 'request');
    expect(request!.request).toMatchObject({
      type: 'tool_approval',
      agent: 'billing',
      toolName: 'refund',
      arguments: '{"amount":40}',
    });
    expect(refunds).toEqual([]);
    await expect(collect(session.send('hello?'))).rejects.toThrow(InvalidInputError);
    await expect(collect(session.send('hello?'))).rejects.toThrow(request!.request.id);
    await first.store.close();

    const second = openDesk(dir.path, refunds);
    const restored = await second.workflow.session({ id: 'a-1' });
    expect(restored.pendingRequests.map((r) => r.id)).toEqual([request!.request.id]);
    await expect(collect(restored.respond(request!.request.id, 'yes'))).rejects.toThrow(InvalidInputError);
    await expect(collect(restored.respond('nope', { approved: true }))).rejects.toThrow(NotFoundError);
    const answer = await collect(restored.respond(request!.request.id, { approved: true }));
    expect(refunds).toEqual(['refund 40']);
    expect(ofType(answer, 'tool.result')).toEqual([
      expect.objectContaining({ toolName: 'refund', content: 'Refunded 40 EUR.', isError: false }),
    ]);
    expect(answer.at(-1)).toMatchObject({ type: 'turn.completed' });
    const stored = await second.store.readMessages('a-1', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'Done: Refunded 40 EUR.' });
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(restored.pendingRequests).toEqual([]);
    await second.store.close();
  });

  it('rejected with a reason after a restore: the tool does not run and the model reads the reason', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const refunds: string[] = [];
    const first = openDesk(dir.path, refunds);
    const session = await first.workflow.session({ id: 'a-2' });
    await collect(session.send('Refund my double charge'));
    const [request] = session.pendingRequests;
    await first.store.close();

    const second = openDesk(dir.path, refunds);
    const restored = await second.workflow.session({ id: 'a-2' });
    const answer = await collect(
      restored.respond(request!.id, { approved: false, reason: 'the charge is legitimate' }),
    );
    expect(refunds).toEqual([]);
    const [result] = ofType(answer, 'message').filter((e) => e.message.role === 'tool');
    expect(result!.message).toMatchObject({ toolName: 'refund', isError: true });
    expect(result!.message.content).toContain('the charge is legitimate');
    expect(second.billing.model.requests[0]!.messages.at(-1)!.content).toContain('the charge is legitimate');
    expect(danglingToolCalls(await second.store.readMessages('a-2', 'main'))).toEqual([]);
    await second.store.close();
  });

  it('with a question and an approval pending, each answer is durable and the step continues once both are answered', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const refunds: string[] = [];
    const first = openDesk(dir.path, refunds, true);
    const session = await first.workflow.session({ id: 'a-3' });
    await collect(session.send('Refund my double charge'));
    expect(session.pendingRequests.map((r) => r.type)).toEqual(['user_input', 'tool_approval']);
    const [question, approval] = session.pendingRequests;
    const partial = await collect(session.respond(question!.id, 'The Visa card'));
    expect(partial.at(-1)?.type).toBe('turn.completed');
    expect(first.billing.model.requests).toHaveLength(1);
    expect(session.pendingRequests.map((r) => r.id)).toEqual([approval!.id]);
    await first.store.close();

    const second = openDesk(dir.path, refunds, true);
    const restored = await second.workflow.session({ id: 'a-3' });
    expect(restored.pendingRequests.map((r) => r.id)).toEqual([approval!.id]);
    await collect(restored.respond(approval!.id, { approved: true }));
    expect(refunds).toEqual(['refund 40']);
    const stored = await second.store.readMessages('a-3', 'main');
    expect(stored.at(-1)).toMatchObject({ content: 'Done: The Visa card | Refunded 40 EUR.' });
    expect(danglingToolCalls(stored)).toEqual([]);
    await second.store.close();
  });
});
