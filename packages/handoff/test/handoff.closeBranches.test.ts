import {
  endConversationControl,
  HumanExecutor,
  InMemoryHumanQueue,
  SessionClosedError,
  type Store,
  tool,
} from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

/**
 * One agent: `refund` asks for an approved refund tool call, `bye` ends the conversation with the
 * end_conversation tool, `operator` hands off to a human operator, anything else gets an answer.
 */
function desk(store: Store) {
  const refunds: string[] = [];
  const refund = tool({
    name: 'refund',
    description: 'Refunds 40 EUR.',
    parameters: z.object({}),
    needsApproval: true,
    execute: () => {
      refunds.push('refund');
      return 'Refunded.';
    },
  });
  const bye = tool({
    name: 'end_conversation',
    description: 'Ends it.',
    parameters: z.object({ reason: z.string() }),
    execute: ({ reason }) => endConversationControl(reason),
  });
  const helper = scriptedAgent(
    'helper',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user' && last.content === 'refund') return { toolCalls: [{ name: 'refund', arguments: {} }] };
      if (last?.role === 'user' && last.content === 'bye')
        return { toolCalls: [{ name: 'end_conversation', arguments: { reason: 'user said goodbye' } }] };
      if (last?.role === 'user' && last.content === 'operator')
        return { toolCalls: [{ name: 'handoff_to_operator', arguments: {} }] };
      return { text: 'How can I help?' };
    },
    [refund, bye],
  );
  const queue = new InMemoryHumanQueue();
  const operator = new HumanExecutor({ name: 'operator', description: 'A human for hard cases.', queue });
  const workflow = new HandoffBuilder().participants(helper, operator).coordinator(helper).store(store).build();
  return { workflow, refunds, queue };
}

type Closer = (session: Awaited<ReturnType<ReturnType<typeof desk>['workflow']['session']>>) => Promise<void>;
const closers: [string, Closer, string][] = [
  ['close()', (main) => main.close({ reason: 'done' }), 'done'],
  ["an agent's end_conversation", async (main) => void (await collect(main.send('bye'))), 'user said goodbye'],
];

describe.each(embeddedStores())('closing a session answers waiting calls on every branch (%s)', (_name, makeStore) => {
  afterAll(disposeStores);

  it.each(closers)(
    '%s on main answers the tool call paused on another branch; answering it then is SessionClosedError',
    async (_how, closeMain, reason) => {
      const store = await makeStore();
      const { workflow, refunds } = desk(store);
      const main = await workflow.session({ id: 's', userId: 'u' });
      await collect(main.send('hello'));
      const alt = await main.fork({ atSeq: main.messages.at(-1)!.seq, branchId: 'alt' });
      await collect(alt.send('refund'));
      const [request] = alt.pendingRequests;
      expect(request).toMatchObject({ type: 'tool_approval', toolName: 'refund' });

      await closeMain(main);

      expect(await store.getSession('s')).toMatchObject({ status: 'closed', closedReason: reason });
      const altMessages = await store.readMessages('s', 'alt');
      expect(danglingToolCalls(altMessages)).toEqual([]);
      expect(altMessages.at(-1)).toMatchObject({ role: 'tool', toolName: 'refund', isError: true });
      expect(altMessages.at(-1)!.content).toContain(reason);
      expect(danglingToolCalls(await store.readMessages('s', 'main'))).toEqual([]);
      // The stale session object and a freshly opened one both see a closed session, nothing pending.
      await expect(collect(alt.respond(request!.id, { approved: true }))).rejects.toThrow(SessionClosedError);
      const reopened = await workflow.session({ id: 's', branch: 'alt' });
      expect(reopened.pendingRequests).toEqual([]);
      expect(reopened.routingState).toBe('closed');
      expect(refunds).toEqual([]);
    },
  );

  it.each(closers)(
    "%s on main withdraws a human operator's task waiting on another branch",
    async (_how, closeMain) => {
      const store = await makeStore();
      const { workflow, queue } = desk(store);
      const main = await workflow.session({ id: 's', userId: 'u' });
      await collect(main.send('hello'));
      const alt = await main.fork({ atSeq: main.messages.at(-1)!.seq, branchId: 'alt' });
      await collect(alt.send('operator'));
      expect(alt.pendingRequests).toMatchObject([{ type: 'human_step', agent: 'operator' }]);
      expect(await queue.list()).toHaveLength(1);

      await closeMain(main);

      expect(await queue.list()).toEqual([]);
      expect(danglingToolCalls(await store.readMessages('s', 'alt'))).toEqual([]);
      expect((await workflow.session({ id: 's', branch: 'alt' })).pendingRequests).toEqual([]);
    },
  );
});
