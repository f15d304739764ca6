import { AbortedError, type BatonEvent, FileStore, InMemoryStore, type PendingWrite, tool } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { countingStore } from './support/countingStore.js';
import { collect, danglingToolCalls, lastOf, scriptedAgent, tempDir } from './support/helpers.js';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const dirs: { dispose(): Promise<void> }[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.dispose();
});

describe('tool results are journalled as each tool returns', () => {
  it('a result is stored before its tool.result event and before a slower sibling finishes; results finishing together share a write', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { store, inner, take } = countingStore(new FileStore({ directory: dir.path }));
    const slow = gate();
    const lookup = tool({
      name: 'lookup',
      description: 'Looks something up.',
      parameters: z.object({ key: z.string() }),
      execute: async ({ key }) => {
        if (key === 'slow') await slow.opened;
        return { key };
      },
    });
    const billing = scriptedAgent(
      'billing',
      (request) =>
        lastOf(request)?.role === 'tool'
          ? { text: 'Done.' }
          : { toolCalls: ['a', 'b', 'c', 'slow'].map((key) => ({ name: 'lookup', arguments: { key } })) },
      [lookup],
    );
    const session = await new HandoffBuilder({ name: 'desk' })
      .participants(billing)
      .store(store)
      .build()
      .session({ id: 'journal-1' });

    const storedAtResult: number[] = [];
    const events: BatonEvent[] = [];
    for await (const event of session.send('look up four things')) {
      events.push(event);
      if (event.type !== 'tool.result') continue;
      const checkpoint = await inner.loadCheckpoint('journal-1', 'main');
      const stored = (checkpoint?.pendingWrites ?? []).map((w: PendingWrite) => w.toolCallId);
      expect(stored, 'a tool.result is announced only once its result is stored').toContain(event.toolCallId);
      storedAtResult.push(stored.length);
      // The three quick results are stored while the slow one still runs.
      if (storedAtResult.length === 3) slow.open();
    }
    expect(storedAtResult.slice(2)).toEqual([3, 4]);
    const puts = take().filter((c) => c.method === 'putPendingWrites').length;
    // a, b and c finish in the same tick: the first is written alone, the next two together; then slow.
    expect(puts).toBeLessThanOrEqual(3);
    expect(puts).toBeGreaterThanOrEqual(2);
    expect(danglingToolCalls(await inner.readMessages('journal-1', 'main'))).toEqual([]);
    expect(events.at(-1)?.type).toBe('turn.completed');
  });
});

describe('cancelling a turn whose tool ignores the signal', () => {
  it('ends the turn with AbortedError promptly, releases the session, and the next send finishes the left step without running the finished tools again', async () => {
    const store = new InMemoryStore();
    const runs: string[] = [];
    const never = gate();
    const stubborn = tool({
      name: 'stubborn',
      description: 'Ignores its signal.',
      parameters: z.object({ key: z.string() }),
      execute: async ({ key }) => {
        runs.push(key);
        if (key === 'hang' && runs.filter((k) => k === 'hang').length === 1) await never.opened; // the first run never returns
        return { key };
      },
    });
    const billing = scriptedAgent(
      'billing',
      (request) =>
        lastOf(request)?.role === 'tool'
          ? { text: 'Done.' }
          : {
              toolCalls: [
                { name: 'stubborn', arguments: { key: 'quick' } },
                { name: 'stubborn', arguments: { key: 'hang' } },
              ],
            },
      [stubborn],
    );
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(billing).store(store).build();
    const session = await workflow.session({ id: 'abort-1' });
    const controller = new AbortController();
    const events: BatonEvent[] = [];
    const started = Date.now();
    const run = (async () => {
      for await (const event of session.send('go', { signal: controller.signal })) {
        events.push(event);
        if (event.type === 'tool.result') controller.abort(new Error('the user left'));
      }
    })();
    await expect(run).rejects.toBeInstanceOf(AbortedError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'ABORTED', fatal: true });

    // The same workflow object is not blocked: the next send first finishes the left step ('hang' runs
    // again — its result was never journalled — 'quick' does not), then runs the new turn.
    const next = await Promise.race([
      collect((await workflow.session({ id: 'abort-1' })).send('again')),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the session stayed locked')), 5_000)),
    ]);
    expect(next.filter((e) => e.type === 'turn.completed')).toHaveLength(2);
    // The left step: 'quick' (journalled) is not run again, 'hang' is; then the new turn runs both.
    expect(runs).toEqual(['quick', 'hang', 'hang', 'quick', 'hang']);
    const stored = await store.readMessages('abort-1', 'main');
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['go', 'again']);
  });
});
