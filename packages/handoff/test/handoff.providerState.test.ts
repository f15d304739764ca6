import { ConfigurationError, type ContextProvider, FileStore, type Store, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import {
  collect,
  deskAgents,
  disposeStores,
  embeddedStores,
  lastOf,
  scriptedAgent,
  tempDir,
} from './support/helpers.js';

afterAll(disposeStores);

/**
 * A provider that keeps its own counts where the runtime stores them: `beforeTurn` calls (once per
 * turn, and again when a paused turn resumes) in its session slice, told to the model too, and
 * model calls in its branch slice (from `prepareModelInput`).
 */
function counter(): ContextProvider {
  return {
    name: 'counter',
    beforeTurn: async ({ state }) => {
      state?.update('session', (draft) => {
        draft.turns = ((draft.turns as number | undefined) ?? 0) + 1;
      });
      return [{ role: 'context', content: `Turns so far: ${state?.session.turns}` }];
    },
    prepareModelInput: (messages, context) => {
      context?.state.update('branch', (draft) => {
        draft.modelCalls = ((draft.modelCalls as number | undefined) ?? 0) + 1;
      });
      return messages;
    },
  };
}

function desk(store: Store) {
  const { triage, billing } = deskAgents();
  return {
    workflow: new HandoffBuilder({ name: 'desk' })
      .participants(triage, billing)
      .store(store)
      .contextProviders(counter())
      .build(),
    billing,
  };
}

describe.each(embeddedStores())("a context provider's state is stored with the session (%s)", (_, makeStore) => {
  it('is kept in the session and branch documents, found by a new workflow, forked as of its seq', async () => {
    const store = await makeStore();
    const session = await desk(store).workflow.session({ id: 'counted' });
    await collect(session.send('first'));
    const afterFirst = session.messages.at(-1)!.seq;
    await collect(session.send('second'));
    // Two turns, two model calls each (triage hands off, billing answers).
    expect((await store.getSession('counted'))?.state).toEqual({ 'provider:counter': { turns: 2 } });
    expect((await store.getBranch('counted', 'main'))?.state).toEqual({ 'provider:counter': { modelCalls: 4 } });

    // Another workflow object (as a restarted process builds it) goes on from the stored counts.
    const again = desk(store);
    await collect((await again.workflow.session({ id: 'counted' })).send('third'));
    expect(
      again.billing.model.requests
        .at(-1)!
        .messages.some((m) => m.role === 'context' && m.content === 'Turns so far: 3'),
    ).toBe(true);
    expect((await store.getBranch('counted', 'main'))?.state).toEqual({ 'provider:counter': { modelCalls: 6 } });

    // A fork's branch slice is the one as of its fork point; the session slice is shared.
    const fork = await (await again.workflow.session({ id: 'counted' })).fork({ atSeq: afterFirst, branchId: 'retry' });
    expect((await store.getBranch('counted', 'retry'))?.state).toEqual({ 'provider:counter': { modelCalls: 2 } });
    await collect(fork.send('second, again'));
    expect((await store.getBranch('counted', 'retry'))?.state).toEqual({ 'provider:counter': { modelCalls: 4 } });
    expect((await store.getSession('counted'))?.state).toEqual({ 'provider:counter': { turns: 4 } });

    // Deleting the session deletes its providers' state with it.
    await store.deleteSession('counted');
    await collect((await desk(store).workflow.session({ id: 'counted' })).send('hello'));
    expect((await store.getSession('counted'))?.state).toEqual({ 'provider:counter': { turns: 1 } });
  });
});

describe("a provider's state and checkpoints", () => {
  it('a change in a paused turn is held by its checkpoint, applied once after a restart', async () => {
    const dir = await tempDir();
    const refund = tool({
      name: 'refund',
      description: 'Refunds.',
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: () => 'Refunded.',
    });
    const open = () => {
      const store = new FileStore({ directory: dir.path });
      const billing = scriptedAgent(
        'billing',
        (request) =>
          lastOf(request)?.role === 'user'
            ? { toolCalls: [{ name: 'refund', arguments: { amount: 40 } }] }
            : { text: 'Done.' },
        [refund],
      );
      return {
        store,
        workflow: new HandoffBuilder({ name: 'refunds' })
          .participants(billing)
          .store(store)
          .contextProviders(counter())
          .build(),
      };
    };
    try {
      const first = open();
      const session = await first.workflow.session({ id: 'paused' });
      await collect(session.send('refund me'));
      const [request] = session.pendingRequests;
      // Not settled into the session document yet: the paused turn's checkpoint holds the change.
      expect((await first.store.getSession('paused'))?.state).toEqual({});
      const checkpoint = await first.store.loadCheckpoint('paused', 'main');
      expect(checkpoint?.statePatches.session).toEqual([
        { op: 'add', path: ['provider:counter'], value: { turns: 1 } },
      ]);
      await first.store.close();

      const second = open();
      await collect((await second.workflow.session({ id: 'paused' })).respond(request!.id, { approved: true }));
      // The paused turn's count from its checkpoint, plus the resumed turn's own `beforeTurn` (as in one process).
      expect((await second.store.getSession('paused'))?.state).toEqual({ 'provider:counter': { turns: 2 } });
      expect((await second.store.getBranch('paused', 'main'))?.state).toEqual({
        'provider:counter': { modelCalls: 2 },
      });
      // The same in one process.
      const one = await second.workflow.session({ id: 'one-process' });
      await collect(one.send('refund me'));
      await collect(one.respond(one.pendingRequests[0]!.id, { approved: true }));
      expect((await second.store.getSession('one-process'))?.state).toEqual({ 'provider:counter': { turns: 2 } });
      expect((await second.store.getBranch('one-process', 'main'))?.state).toEqual({
        'provider:counter': { modelCalls: 2 },
      });
      await second.store.close();
    } finally {
      await dir.dispose();
    }
  });
});

describe('provider names', () => {
  it('refuses two providers of one name, and a name that cannot key state, when the workflow is built', () => {
    const { triage } = deskAgents();
    const build = (...providers: ContextProvider[]) =>
      new HandoffBuilder({ name: 'x' })
        .participants(triage)
        .contextProviders(...providers)
        .build();
    expect(() => build(counter(), counter())).toThrow(ConfigurationError);
    expect(() => build(counter(), counter())).toThrow('Two context providers are named "counter"');
    expect(() => build({ name: 'my.memory' })).toThrow(ConfigurationError);
    expect(() => build({ name: 'a' }, { name: 'b' })).not.toThrow();
  });
});
