/**
 * The idle sweep (`closeIdleSessions`) on sessions the real handoff runtime paused on a request:
 * a question to the user (`user_input`) or a tool waiting for a human's approval (`tool_approval`).
 * Closing such a session must not leave the request's tool call without a result (docs/architecture.md
 * invariant 3): by default the sweep answers each open call with an error result ("the
 * conversation was closed before this was answered") and then closes; with
 * `pendingRequests: 'skip'` it leaves such sessions open.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, InMemoryStore, type Store } from '@baton/core';
import { closeIdleSessions, EpisodicMemory } from '@baton/memory';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, ofType } from '../packages/handoff/test/support/helpers.js';
import { approvalDesk, askingDesk } from '../packages/handoff/test/support/scenarioDesks.js';

const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

const stores: [string, () => Promise<Store>][] = [
  ['InMemoryStore', async () => new InMemoryStore()],
  [
    'FileStore',
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'baton-idle-sweep-'));
      directories.push(directory);
      return new FileStore({ directory });
    },
  ],
];

/** A sweep that sees every session as idle (its clock a minute ahead). */
const sweep = (store: Store, options: { pendingRequests?: 'answer' | 'skip' } = {}) =>
  closeIdleSessions({
    store,
    idleFor: 1000,
    now: new Date(Date.now() + 60_000),
    providers: [new EpisodicMemory()],
    ...options,
  });

describe.each(stores)('the idle sweep on sessions paused by the handoff runtime (%s)', (_name, open) => {
  it('closes a session waiting for user input with an error result for the question, leaving no dangling tool call', async () => {
    const store = await open();
    const { workflow } = askingDesk(store, 2);
    const session = await workflow.session({ id: 'asked', userId: 'u-1' });
    const events = await collect(session.send('I was charged twice for order 1234'));
    expect(ofType(events, 'request')[0]?.request.type).toBe('user_input');

    const result = await sweep(store);
    expect(result).toEqual({ closed: ['asked'], skipped: [], failed: [] });
    const messages = await store.readMessages('asked', 'main');
    expect(danglingToolCalls(messages)).toEqual([]);
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 'ask_1',
      toolName: 'request_user_input',
      agent: 'billing',
      isError: true,
      content: 'The conversation was closed before this was answered (idle).',
    });
    expect(await store.getSession('asked')).toMatchObject({ status: 'closed', closedReason: 'idle' });
    expect((await store.getEpisode('asked'))?.agents).toEqual(['triage', 'billing']);

    const reopened = await askingDesk(store, 2).workflow.session({ id: 'asked' });
    expect(reopened.pendingRequests).toEqual([]);
    expect(reopened.routingState).toBe('closed');
  });

  it('closes a session waiting for a tool approval without running the tool, answering the call with an error result', async () => {
    const store = await open();
    const refunds: string[] = [];
    const { workflow } = approvalDesk(store, refunds);
    const session = await workflow.session({ id: 'approval', userId: 'u-1' });
    const events = await collect(session.send('Refund my double charge'));
    expect(ofType(events, 'request')[0]?.request.type).toBe('tool_approval');

    expect((await sweep(store)).closed).toEqual(['approval']);
    const messages = await store.readMessages('approval', 'main');
    expect(danglingToolCalls(messages)).toEqual([]);
    expect(messages.filter((m) => m.role === 'tool' && m.toolCallId === 'refund_1')).toEqual([
      expect.objectContaining({
        toolName: 'refund',
        isError: true,
        content: 'The conversation was closed before this was answered (idle).',
      }),
    ]);
    expect(refunds).toEqual([]);
    expect((await approvalDesk(store, refunds).workflow.session({ id: 'approval' })).pendingRequests).toEqual([]);
    expect(refunds).toEqual([]);
  });

  it('keeps a finished tool result of the paused step instead of replacing it, so the tool never runs again', async () => {
    const store = await open();
    const refunds: string[] = [];
    const { workflow } = approvalDesk(store, refunds, true);
    const session = await workflow.session({ id: 'half', userId: 'u-1' });
    await collect(session.send('Refund my double charge'));
    const approval = session.pendingRequests.find((r) => r.type === 'tool_approval')!;
    // The approved refund runs and is saved as a pending write; the question is still open.
    await collect(session.respond(approval.id, { approved: true }));
    expect(refunds).toEqual(['refund 40']);
    expect(session.pendingRequests.map((r) => r.type)).toEqual(['user_input']);

    expect((await sweep(store)).closed).toEqual(['half']);
    const messages = await store.readMessages('half', 'main');
    expect(danglingToolCalls(messages)).toEqual([]);
    const results = messages.filter((m) => m.role === 'tool');
    expect(results.find((m) => m.toolCallId === 'refund_1')).toMatchObject({
      isError: false,
      content: 'Refunded 40 EUR.',
    });
    expect(results.find((m) => m.toolCallId === 'ask_1')).toMatchObject({ isError: true });
    expect(refunds).toEqual(['refund 40']);
  });

  it("with pendingRequests: 'skip' leaves a paused session open and untouched, and still closes the others", async () => {
    const store = await open();
    await collect(
      (await askingDesk(store, 1).workflow.session({ id: 'waiting', userId: 'u-1' })).send('charged twice'),
    );
    const answered = await askingDesk(store, 0).workflow.session({ id: 'answered', userId: 'u-1' });
    await collect(answered.send('charged twice'));
    const before = await store.readMessages('waiting', 'main');

    const result = await sweep(store, { pendingRequests: 'skip' });
    expect(result.closed).toEqual(['answered']);
    expect(result.skipped).toEqual(['waiting']);
    expect(await store.getSession('waiting')).toMatchObject({ status: 'active' });
    expect(await store.readMessages('waiting', 'main')).toEqual(before);
  });
  it('a sweep that answered the open calls but failed to close: the next opener closes the session instead of running the agent again', async () => {
    const store = await open();
    const { workflow } = askingDesk(store, 2);
    const session = await workflow.session({ id: 'half-swept', userId: 'u-1' });
    await collect(session.send('I was charged twice for order 1234'));
    // The sweep's close write fails after its results were appended (a crash between the two).
    const failingClose = new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'updateSession') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<Store['updateSession']>) => {
          if (args[1].status === 'closed') throw new Error('lost the connection');
          return (value as Store['updateSession']).apply(target, args);
        };
      },
    });
    await expect(sweep(failingClose)).rejects.toThrow('lost the connection');
    expect((await store.getSession('half-swept'))?.status).toBe('active');
    const before = (await store.readMessages('half-swept', 'main')).length;

    const reopened = await askingDesk(store, 2).workflow.session({ id: 'half-swept', userId: 'u-1' });
    await collect(reopened.resume());
    expect((await store.getSession('half-swept'))?.status).toBe('closed');
    expect((await store.readMessages('half-swept', 'main')).length).toBe(before); // no agent ran
    expect(danglingToolCalls(await store.readMessages('half-swept', 'main'))).toEqual([]);
  });
});
