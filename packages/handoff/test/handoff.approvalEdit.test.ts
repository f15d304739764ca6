import { FileStore, InvalidInputError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, ofType, tempDir } from './support/helpers.js';
import { approvalDesk } from './support/scenarioDesks.js';

/** Approvals that edit: `respond(id, { approved: true, arguments })` runs the tool with the human's arguments. */
describe('approvals that edit the arguments', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('after a restore, runs the tool with the edited arguments; the history keeps the model call and what was approved', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const refunds: string[] = [];
    const first = approvalDesk(new FileStore({ directory: dir.path }), refunds);
    const session = await first.workflow.session({ id: 'edit-1' });
    await collect(session.send('Refund my double charge'));
    const [request] = session.pendingRequests;
    expect(request).toMatchObject({ type: 'tool_approval', toolName: 'refund', arguments: '{"amount":40}' });
    await first.store.close();

    const second = approvalDesk(new FileStore({ directory: dir.path }), refunds);
    const restored = await second.workflow.session({ id: 'edit-1' });
    const events = await collect(restored.respond(request!.id, { approved: true, arguments: { amount: 25 } }));

    expect(refunds).toEqual(['refund 25']);
    expect(ofType(events, 'tool.result')).toEqual([
      expect.objectContaining({ toolName: 'refund', content: 'Refunded 25 EUR.', isError: false }),
    ]);
    const stored = await second.store.readMessages('edit-1', 'main');
    const call = stored.find((m) => m.toolCalls?.some((c) => c.name === 'refund'));
    expect(call?.toolCalls?.[0]?.arguments).toBe('{"amount":40}');
    const result = stored.find((m) => m.role === 'tool' && m.toolName === 'refund');
    expect(result).toMatchObject({ content: 'Refunded 25 EUR.', metadata: { approvedArguments: { amount: 25 } } });
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'Done: Refunded 25 EUR.' });
    expect(danglingToolCalls(stored)).toEqual([]);
    await second.store.close();
  });

  it('refuses edited arguments that fail the tool schema or are not an object; the request stays pending and can be answered', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const refunds: string[] = [];
    const desk = approvalDesk(new FileStore({ directory: dir.path }), refunds);
    const session = await desk.workflow.session({ id: 'edit-2' });
    await collect(session.send('Refund my double charge'));
    const [request] = session.pendingRequests;

    const wrongType = collect(session.respond(request!.id, { approved: true, arguments: { amount: 'lots' } }));
    await expect(wrongType).rejects.toThrow(InvalidInputError);
    await expect(wrongType).rejects.toThrow(/amount/);
    await expect(collect(session.respond(request!.id, { approved: true, arguments: [1, 2] as never }))).rejects.toThrow(
      /must be a JSON object/,
    );
    expect(refunds).toEqual([]);
    expect(session.pendingRequests.map((r) => r.id)).toEqual([request!.id]);

    const reopened = await approvalDesk(new FileStore({ directory: dir.path }), refunds).workflow.session({
      id: 'edit-2',
    });
    expect(reopened.pendingRequests.map((r) => r.id)).toEqual([request!.id]);
    await collect(session.respond(request!.id, { approved: true, arguments: { amount: 10 } }));
    expect(refunds).toEqual(['refund 10']);
    await desk.store.close();
  });

  it('an approval without arguments runs the model arguments and records no approvedArguments', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const refunds: string[] = [];
    const desk = approvalDesk(new FileStore({ directory: dir.path }), refunds);
    const session = await desk.workflow.session({ id: 'edit-3' });
    await collect(session.send('Refund my double charge'));
    await collect(session.respond(session.pendingRequests[0]!.id, { approved: true }));
    const result = session.messages.find((m) => m.role === 'tool' && m.toolName === 'refund');
    expect(result?.content).toBe('Refunded 40 EUR.');
    expect(result?.metadata?.approvedArguments).toBeUndefined();
    await desk.store.close();
  });
});
