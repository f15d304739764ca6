import { InvalidInputError, type Store, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

afterAll(disposeStores);

/** A planner whose tool appends each user request to the branch state's `plan`, and answers with the plan so far. */
function planner(store: Store) {
  const addStep = tool({
    name: 'add_step',
    description: 'Adds a step to the plan.',
    parameters: z.object({ step: z.string() }),
    execute: async ({ step }, { state }) => {
      state.update('branch', (draft) => {
        draft.plan = [...((draft.plan as string[] | undefined) ?? []), step];
      });
      return (state.branch.plan as string[]).join(' → ');
    },
  });
  const agent = scriptedAgent(
    'planner',
    (request) => {
      const last = lastOf(request);
      return last?.role === 'user'
        ? { toolCalls: [{ name: 'add_step', arguments: { step: last.content } }] }
        : { text: `Plan: ${last?.content}` };
    },
    [addStep],
  );
  return new HandoffBuilder({ name: 'plans' }).participants(agent).store(store).build();
}

describe.each(embeddedStores())('a fork sees the branch state as of its seq (%s)', (_, makeStore) => {
  it('forks after turn 1 start from the plan of turn 1, not from the plan of today; a fork at the head takes today’s', async () => {
    const store = await makeStore();
    const session = await planner(store).session({ id: 'plan-1' });
    await collect(session.send('book flight'));
    const afterFirst = session.messages.at(-1)!.seq;
    await collect(session.send('book hotel'));
    await collect(session.send('rent car'));
    expect((await store.getBranch('plan-1', 'main'))?.state.plan).toEqual(['book flight', 'book hotel', 'rent car']);

    const past = await session.fork({ atSeq: afterFirst, branchId: 'past' });
    expect((await store.getBranch('plan-1', 'past'))?.state.plan).toEqual(['book flight']);
    const events = await collect(past.send('take train'));
    const answer = events.findLast((e) => e.type === 'message');
    expect(answer?.type === 'message' && answer.message.content).toBe('Plan: book flight → take train');

    const now = await session.fork({ atSeq: session.messages.at(-1)!.seq, branchId: 'now' });
    expect((await store.getBranch('plan-1', now.branchId))?.state.plan).toEqual([
      'book flight',
      'book hotel',
      'rent car',
    ]);
    // A fork of a fork at a seq inside the parent's part of the history: the state as of that seq.
    const pastOfPast = await past.fork({ atSeq: afterFirst, branchId: 'past-of-past' });
    expect((await store.getBranch('plan-1', pastOfPast.branchId))?.state.plan).toEqual(['book flight']);
    const atStart = await session.fork({ atSeq: 0, branchId: 'empty' });
    expect((await store.getBranch('plan-1', atStart.branchId))?.state).toEqual({});
  });

  it('refuses to guess when the state was changed outside the turns, and takes an explicit state', async () => {
    const store = await makeStore();
    const session = await planner(store).session({ id: 'plan-2' });
    await collect(session.send('book flight'));
    const afterFirst = session.messages.at(-1)!.seq;
    await collect(session.send('book hotel'));
    const branch = (await store.getBranch('plan-2', 'main'))!;
    await store.updateBranch(
      'plan-2',
      'main',
      { state: { ...branch.state, budget: 500 } },
      { expectedVersion: branch.version },
    );
    const reopened = await planner(store).session({ id: 'plan-2' });
    await expect(reopened.fork({ atSeq: afterFirst, branchId: 'guess' })).rejects.toThrow(InvalidInputError);
    expect((await store.listBranches('plan-2')).map((b) => b.id)).toEqual(['main']);
    await reopened.fork({ atSeq: afterFirst, branchId: 'given', state: { plan: ['book flight'], budget: 500 } });
    expect((await store.getBranch('plan-2', 'given'))?.state).toEqual({ plan: ['book flight'], budget: 500 });
  });
});
