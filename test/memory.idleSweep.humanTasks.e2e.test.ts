/**
 * The idle sweep (`closeIdleSessions`) on sessions paused on a human operator's step (a
 * `HumanExecutor`'s task in its `HumanQueue`), on any branch: given the workflow's participants,
 * it withdraws those tasks as `session.close()` does, so no operator is left with a task whose
 * answer would only get `SessionClosedError`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, HumanExecutor, InMemoryHumanQueue, InMemoryStore, type Store } from '@baton/core';
import { HandoffBuilder } from '@baton/handoff';
import { closeIdleSessions, EpisodicMemory } from '@baton/memory';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, lastOf, scriptedAgent } from '../packages/handoff/test/support/helpers.js';

const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

const stores: [string, () => Promise<Store>][] = [
  ['InMemoryStore', async () => new InMemoryStore()],
  [
    'FileStore',
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'baton-idle-human-'));
      directories.push(directory);
      return new FileStore({ directory });
    },
  ],
];

/** A helper agent that hands a message asking for a person to a human operator, and answers anything else. */
function operatorDesk(store: Store) {
  const helper = scriptedAgent('helper', (request) => {
    const last = lastOf(request);
    if (last?.role === 'user' && last.content.includes('a person'))
      return { toolCalls: [{ name: 'handoff_to_operator', arguments: {} }] };
    return { text: 'How can I help?' };
  });
  const queue = new InMemoryHumanQueue();
  const operator = new HumanExecutor({ name: 'operator', description: 'A human for hard cases.', queue });
  const workflow = new HandoffBuilder().participants(helper, operator).coordinator(helper).store(store).build();
  return { workflow, queue, operator };
}

/** A sweep that sees every session as idle (its clock a minute ahead). */
const later = () => new Date(Date.now() + 60_000);

describe.each(stores)('the idle sweep withdraws human operator tasks (%s)', (_name, open) => {
  it("withdraws the tasks of every branch of a closed session through the workflow's participants", async () => {
    const store = await open();
    const { workflow, queue } = operatorDesk(store);
    const main = await workflow.session({ id: 'waiting', userId: 'u-1' });
    await collect(main.send('hello'));
    const fork = await main.fork({ atSeq: main.messages.at(-1)!.seq, branchId: 'alt' });
    await collect(fork.send('I want a person'));
    await collect(main.send('a person, please'));
    expect(await queue.list()).toHaveLength(2);

    const participants = [...workflow.config.participants.values()];
    const result = await closeIdleSessions({
      store,
      idleFor: 1000,
      now: later(),
      providers: [new EpisodicMemory()],
      participants,
    });

    expect(result).toEqual({ closed: ['waiting'], skipped: [], failed: [] });
    expect(await queue.list()).toEqual([]);
    for (const branch of ['main', 'alt']) {
      expect(danglingToolCalls(await store.readMessages('waiting', branch))).toEqual([]);
      const reopened = await operatorDesk(store).workflow.session({ id: 'waiting', branch });
      expect(reopened.pendingRequests).toEqual([]);
      expect(reopened.routingState).toBe('closed');
    }
  });

  it("with pendingRequests: 'skip' leaves a session paused on an operator's step open, its task queued", async () => {
    const store = await open();
    const { workflow, queue, operator } = operatorDesk(store);
    await collect((await workflow.session({ id: 'paused', userId: 'u-1' })).send('a person, please'));

    const result = await closeIdleSessions({
      store,
      idleFor: 1000,
      now: later(),
      participants: [operator],
      pendingRequests: 'skip',
    });

    expect(result).toEqual({ closed: [], skipped: ['paused'], failed: [] });
    expect(await queue.list()).toHaveLength(1);
    expect((await store.getSession('paused'))?.status).toBe('active');
  });

  it('a failed withdrawal leaves the session open, reported failed only; the next sweep closes it', async () => {
    const store = await open();
    const { workflow, queue, operator } = operatorDesk(store);
    await collect((await workflow.session({ id: 'flaky', userId: 'u-1' })).send('a person, please'));
    const down = Object.assign(Object.create(operator) as HumanExecutor, {
      withdrawRequests: async () => Promise.reject(new Error('queue service unavailable')),
    });

    const first = await closeIdleSessions({ store, idleFor: 1000, now: later(), participants: [down] });
    expect(first.closed).toEqual([]);
    expect(first.failed.map((f) => [f.sessionId, (f.error as Error).message])).toEqual([
      ['flaky', 'queue service unavailable'],
    ]);
    expect((await store.getSession('flaky'))?.status).toBe('active');

    expect(await closeIdleSessions({ store, idleFor: 1000, now: later(), participants: [operator] })).toEqual({
      closed: ['flaky'],
      skipped: [],
      failed: [],
    });
    expect(await queue.list()).toEqual([]);
  });
});
