import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, InMemoryStore, type Store, StoreError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { crashDesk } from './support/crashDesk.js';
import { collect, danglingToolCalls, deskAgents, ofType, tempDir } from './support/helpers.js';
import { killChildWhen } from './support/killChild.js';

const childScript = fileURLToPath(new URL('./support/crashChild.ts', import.meta.url));

/** Starts the child turn and kills it with SIGKILL once two of its three tool results are stored as pending writes. */
async function crashAfterTwoResults(directory: string, logFile: string): Promise<void> {
  const twoStored = async () => {
    const probe = new FileStore({ directory });
    const checkpoint = await probe.loadCheckpoint('crash-1', 'main').catch(() => undefined);
    await probe.close();
    return (checkpoint?.pendingWrites.length ?? 0) >= 2;
  };
  await killChildWhen(childScript, [directory, logFile], twoStored, 'Two pending writes');
}

describe('crash mid-step (Done-when 3)', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  for (const how of ['resume()', 'the next send()'] as const) {
    it(`after SIGKILL with two of three tool calls finished, ${how} runs only the third`, async () => {
      const dir = await tempDir();
      dispose = dir.dispose;
      const logFile = join(dir.path, 'tool-runs.log');
      writeFileSync(logFile, '');
      const directory = join(dir.path, 'store');
      await crashAfterTwoResults(directory, logFile);
      expect(readFileSync(logFile, 'utf8').trim().split('\n').sort()).toEqual(['step_a:child', 'step_b:child']);

      const { workflow, store, model } = crashDesk(directory, logFile, 'parent', false);
      const session = await workflow.session({ id: 'crash-1' });
      expect(session.routingState).toBe('running');
      const events = how === 'resume()' ? await collect(session.resume()) : await collect(session.send('Thanks!'));

      expect(ofType(events, 'tool.call').map((e) => e.toolCall.id)).toEqual(['c']);
      expect(readFileSync(logFile, 'utf8').trim().split('\n').sort()).toEqual([
        'step_a:child',
        'step_b:child',
        'step_c:parent',
      ]);
      const stored = await store.readMessages('crash-1', 'main');
      const results = stored.filter((m) => m.role === 'tool');
      expect(results.map((m) => [m.toolCallId, m.content])).toEqual([
        ['a', 'step_a finished'],
        ['b', 'step_b finished'],
        ['c', 'step_c finished'],
      ]);
      expect(danglingToolCalls(stored)).toEqual([]);
      expect(stored[5]).toMatchObject({ role: 'assistant', content: 'All three steps are done.' });
      // The resumed model call saw each message once.
      const ids = model.requests[0]!.messages.flatMap((m) => (m.id ? [m.id] : []));
      expect(new Set(ids).size).toBe(ids.length);
      if (how === 'the next send()') {
        expect(ofType(events, 'turn.completed')).toHaveLength(2);
        expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
          'Run the three steps',
          'Thanks!',
        ]);
      } else {
        expect(ofType(events, 'turn.completed')).toHaveLength(1);
      }
      await store.close();
    });
  }

  it('a crash right after the coordinator’s handoff call was committed: the resumed turn hands off once', async () => {
    const inner = new InMemoryStore();
    let written = 0;
    // A store that dies on the third message of the first turn (the handoff's tool result). The turn's
    // messages are written in one append, so it stores the first two of that append and then fails,
    // as a write cut off by a crash can leave it.
    const failing = new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'writeBatch') return undefined; // no batches: the messages go through appendMessages, which fails
        if (prop !== 'appendMessages') return typeof value === 'function' ? value.bind(target) : value;
        return async (...[sessionId, branchId, messages]: Parameters<Store['appendMessages']>) => {
          const room = 2 - written;
          if (messages.length > room) {
            if (room > 0) await target.appendMessages(sessionId, branchId, messages.slice(0, room));
            written = 2;
            throw new StoreError('disk gone');
          }
          written += messages.length;
          return target.appendMessages(sessionId, branchId, messages);
        };
      },
    }) as Store;
    const crashed = deskAgents();
    const first = await new HandoffBuilder()
      .participants(crashed.triage, crashed.billing)
      .store(failing)
      .build()
      .session({ id: 'crash-2' });
    await expect(collect(first.send('Refund please'))).rejects.toThrow(StoreError);
    expect((await inner.readMessages('crash-2', 'main')).map((m) => m.role)).toEqual(['user', 'assistant']);

    const { triage, billing } = deskAgents();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(inner)
      .build()
      .session({ id: 'crash-2' });
    expect(session.routingState).toBe('running');
    const events = await collect(session.resume());
    expect(ofType(events, 'handoff').map((e) => `${e.from}->${e.to}`)).toEqual(['triage->billing']);
    expect(triage.model.requests).toHaveLength(0);
    const stored = await inner.readMessages('crash-2', 'main');
    expect(stored.map((m) => [m.role, m.agent ?? null])).toEqual([
      ['user', null],
      ['assistant', 'triage'],
      ['tool', 'triage'],
      ['assistant', 'billing'],
    ]);
    expect(danglingToolCalls(stored)).toEqual([]);
  });
});
