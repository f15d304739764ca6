import {
  agent,
  ConcurrencyError,
  FileStore,
  InMemoryStore,
  type ModelClient,
  ModelProviderError,
  type Store,
  tool,
} from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder, type HandoffSession } from '../src/index.js';
import { appendsOf, countingStore, countsOf, writesOf } from './support/countingStore.js';
import { collect, deskAgents, lastOf, ofType, scriptedAgent, tempDir } from './support/helpers.js';

/** The seqs `from`…`to`. */
function seqs(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

describe('store round trips per turn', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dispose?.();
    dispose = undefined;
  });

  for (const kind of ['InMemoryStore', 'FileStore'] as const) {
    it(`a handoff turn (checkpoints every 'turn', keep last 5) makes one append of its 4 messages, one checkpoint, one session update, all in one store write; every 5th turn a prune too, in that same write (${kind})`, async () => {
      let inner: Store = new InMemoryStore();
      if (kind === 'FileStore') {
        const dir = await tempDir();
        dispose = dir.dispose;
        inner = new FileStore({ directory: dir.path });
      }
      const counted = countingStore(inner);
      const { triage, billing } = deskAgents();
      const workflow = new HandoffBuilder().participants(triage, billing).store(counted.store).build();
      const session = await workflow.session({ id: 'rt-1' });
      counted.take();
      const manifests: number[] = [];
      for (let turn = 1; turn <= 12; turn += 1) {
        const events = await collect(session.send(`Question ${turn}`));
        expect(events.at(-1)?.type).toBe('turn.completed');
        const calls = counted.take();
        const plain = { appendMessages: 1, saveCheckpoint: 1, updateSession: 1 };
        expect(countsOf(calls), `turn ${turn}`).toEqual(turn % 5 === 0 ? { ...plain, pruneCheckpoints: 1 } : plain);
        expect(appendsOf(calls)).toEqual([seqs(4 * turn - 3, 4 * turn)]);
        expect(writesOf(calls), `turn ${turn}`).toBe(1); // one batch, its prune included
        // The messages go before the checkpoint that points at them.
        expect(calls.map((c) => c.method).indexOf('appendMessages')).toBeLessThan(
          calls.map((c) => c.method).indexOf('saveCheckpoint'),
        );
        manifests.push((await inner.listCheckpoints('rt-1', 'main')).length);
      }
      // Pruned back to 5 at turns 5 and 10, never more than 2 × 5 − 1 in between.
      expect(manifests).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 5, 6, 7]);
      expect((await inner.readMessages('rt-1', 'main')).map((m) => m.seq)).toEqual(seqs(1, 48));

      // A fresh process loads the newest checkpoint and goes on from it.
      const fresh = deskAgents();
      const reopened = await new HandoffBuilder()
        .participants(fresh.triage, fresh.billing)
        .store(inner)
        .build()
        .session({ id: 'rt-1' });
      expect(reopened.routingState).toBe('idle');
      const events = await collect(reopened.send('Question 13'));
      expect(events.at(-1)).toMatchObject({ type: 'turn.completed', turn: 13 });
      expect((await inner.readMessages('rt-1', 'main')).at(-1)).toMatchObject({
        seq: 52,
        agent: 'billing',
        content: 'Answer to: Question 13',
      });
      await inner.close();
    });
  }

  it("prunes: 'latest' at every turn end (one checkpoint stays); { maxAgeMs } at most once per maxAgeMs / 10 per session object", async () => {
    for (const keep of ['latest', { maxAgeMs: 3_600_000 }] as const) {
      const counted = countingStore(new InMemoryStore());
      const { triage, billing } = deskAgents();
      const session = await new HandoffBuilder()
        .participants(triage, billing)
        .checkpoints({ keep })
        .store(counted.store)
        .build()
        .session({ id: 'rt-keep' });
      counted.take();
      const prunes: number[] = [];
      const kept: number[] = [];
      for (let turn = 1; turn <= 4; turn += 1) {
        await collect(session.send(`Question ${turn}`));
        prunes.push(countsOf(counted.take()).pruneCheckpoints ?? 0);
        kept.push((await counted.inner.listCheckpoints('rt-keep', 'main')).length);
      }
      if (keep === 'latest') {
        expect(prunes).toEqual([1, 1, 1, 1]);
        expect(kept).toEqual([1, 1, 1, 1]);
      } else {
        // The first turn end of a session object prunes; the next prune is due 6 minutes later.
        expect(prunes).toEqual([1, 0, 0, 0]);
        expect(kept).toEqual([1, 2, 3, 4]);
      }
    }
  });

  it('a turn with a tool call stores the call before the tool runs (two appends: up to the call, then the rest)', async () => {
    const counted = countingStore(new InMemoryStore());
    const storedWhenRun: number[][] = [];
    const lookUp = tool({
      name: 'look_up',
      description: 'Looks the order up.',
      parameters: z.object({}),
      execute: async () => {
        storedWhenRun.push((await counted.inner.readMessages('rt-2', 'main')).map((m) => m.seq));
        return 'order 1234: shipped';
      },
    });
    const helper = scriptedAgent(
      'helper',
      (request) =>
        lastOf(request)?.role === 'user'
          ? { toolCalls: [{ name: 'look_up', arguments: {} }] }
          : { text: 'It shipped.' },
      [lookUp],
    );
    const session = await new HandoffBuilder()
      .participants(helper)
      .store(counted.store)
      .build()
      .session({ id: 'rt-2' });
    counted.take();
    await collect(session.send('Where is my order?'));
    const calls = counted.take();
    expect(countsOf(calls)).toEqual({ appendMessages: 2, saveCheckpoint: 2, putPendingWrites: 1, updateSession: 1 });
    expect(appendsOf(calls)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(storedWhenRun).toEqual([[1, 2]]);
    // The tool's result was durable (a pending write of the checkpoint at seq 2) before its message was appended.
    expect(calls.map((c) => c.method)).toEqual([
      'appendMessages',
      'saveCheckpoint',
      'putPendingWrites',
      'appendMessages',
      'updateSession',
      'saveCheckpoint',
    ]);
  });

  it('a turn that pauses on request_user_input makes one append; the answer is durable at once and its turn makes one more', async () => {
    const counted = countingStore(new InMemoryStore());
    const build = () => {
      const triage = scriptedAgent('triage', (request) =>
        lastOf(request)?.role === 'user'
          ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
          : { text: 'Anything else?' },
      );
      const billing = scriptedAgent('billing', (request) =>
        lastOf(request)?.role === 'tool'
          ? { text: `Refunded to ${lastOf(request)?.content}.` }
          : { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Which account?' } }] },
      );
      return new HandoffBuilder().participants(triage, billing).store(counted.store).build();
    };
    const session = await build().session({ id: 'rt-3' });
    counted.take();
    const paused = await collect(session.send('Refund please'));
    expect(ofType(paused, 'request')).toHaveLength(1);
    let calls = counted.take();
    // The checkpoint right after billing's call (it is not a handoff) and the one of the pause.
    expect(countsOf(calls)).toEqual({ appendMessages: 1, saveCheckpoint: 2 });
    expect(appendsOf(calls)).toEqual([seqs(1, 4)]);

    // Everything of the paused turn is in the store: a fresh process answers the request.
    const reopened = await build().session({ id: 'rt-3' });
    expect(reopened.pendingRequests).toHaveLength(1);
    counted.take();
    const answered = await collect(reopened.respond(reopened.pendingRequests[0]!.id, 'AC-99812'));
    expect(answered.at(-1)?.type).toBe('turn.completed');
    calls = counted.take();
    expect(countsOf(calls)).toEqual({ putPendingWrites: 1, appendMessages: 1, saveCheckpoint: 1, updateSession: 1 });
    expect(appendsOf(calls)).toEqual([[5, 6]]);
    expect((await counted.inner.readMessages('rt-3', 'main')).at(-1)).toMatchObject({
      seq: 6,
      content: 'Refunded to AC-99812.',
    });
  });

  it("with checkpoints every 'step' each commit is stored before its checkpoint (no batching)", async () => {
    const counted = countingStore(new InMemoryStore());
    const { triage, billing } = deskAgents();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .checkpoints({ every: 'step' })
      .store(counted.store)
      .build()
      .session({ id: 'rt-4' });
    counted.take();
    await collect(session.send('Question'));
    const calls = counted.take();
    // Five checkpoints: the fifth (step 5, with keep last 5) makes a prune due at the turn's end.
    expect(countsOf(calls)).toEqual({ appendMessages: 4, saveCheckpoint: 5, updateSession: 1, pruneCheckpoints: 1 });
    expect(appendsOf(calls)).toEqual([[1], [2], [3], [4]]);
  });
});

describe('write-behind and failures', () => {
  it('a model failure mid-turn stores what the turn committed (one append) before the error is thrown; resume goes on from there', async () => {
    const counted = countingStore(new InMemoryStore());
    let failures = 1;
    const triage = scriptedAgent('triage', (request) =>
      lastOf(request)?.role === 'user'
        ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
        : { text: 'Anything else?' },
    );
    const billing = scriptedAgent('billing', () => {
      if (failures > 0) {
        failures -= 1;
        throw new ModelProviderError('HTTP 503 from the provider', { status: 503 });
      }
      return { text: 'Refund sent.' };
    });
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(counted.store)
      .build()
      .session({ id: 'rt-5' });
    counted.take();
    await expect(collect(session.send('Refund please'))).rejects.toThrow(ModelProviderError);
    const calls = counted.take();
    expect(appendsOf(calls)).toEqual([[1, 2, 3]]);
    expect(countsOf(calls)).toEqual({ appendMessages: 1 });

    const events = await collect(session.resume());
    expect(events.at(-1)?.type).toBe('turn.completed');
    expect(triage.model.requests).toHaveLength(1);
    expect((await counted.inner.readMessages('rt-5', 'main')).map((m) => [m.seq, m.role, m.agent ?? null])).toEqual([
      [1, 'user', null],
      [2, 'assistant', 'triage'],
      [3, 'tool', 'triage'],
      [4, 'assistant', 'billing'],
    ]);
  });

  it('a turn the caller stops reading stores what it committed; resume() finishes it', async () => {
    const store = new InMemoryStore();
    const { triage, billing } = deskAgents();
    const session: HandoffSession = await new HandoffBuilder()
      .participants(triage, billing)
      .store(store)
      .build()
      .session({ id: 'rt-6' });
    for await (const event of session.send('Refund please')) if (event.type === 'handoff') break;
    expect((await store.readMessages('rt-6', 'main')).map((m) => m.seq)).toEqual([1, 2, 3]);
    expect(session.routingState).toBe('running');
    await collect(session.resume());
    expect((await store.readMessages('rt-6', 'main')).at(-1)).toMatchObject({ seq: 4, agent: 'billing' });
    expect(triage.model.requests).toHaveLength(1);
  });

  it('a crash before the turn’s first durability point loses that unfinished turn (user message included); its late flush loses to the new writer', async () => {
    const store = new InMemoryStore();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Billing's model answers only when the gate opens: until then the first "process" is stuck mid-turn.
    const stuck: ModelClient = {
      model: 'gated',
      async *stream() {
        await gate;
        yield { type: 'text.delta', delta: 'Late answer.' };
        yield { type: 'finish', finishReason: 'stop' };
      },
    };
    const first = deskAgents();
    const stuckBilling = agent({
      name: 'billing',
      description: 'Refunds, charges, invoices.',
      instructions: 'Answer.',
      model: stuck,
    });
    const stuckSession = await new HandoffBuilder()
      .participants(first.triage, stuckBilling)
      .store(store)
      .build()
      .session({ id: 'rt-7' });
    const stuckTurn = collect(stuckSession.send('Refund please'));
    while (first.triage.model.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 5));

    // Another process sees nothing of the unfinished turn: nothing of it reached a durability point.
    expect(await store.readMessages('rt-7', 'main')).toEqual([]);
    const second = deskAgents();
    const session = await new HandoffBuilder()
      .participants(second.triage, second.billing)
      .store(store)
      .build()
      .session({ id: 'rt-7' });
    expect(session.routingState).toBe('idle');
    expect(ofType(await collect(session.resume()), 'turn.completed')).toHaveLength(0);
    await collect(session.send('Refund please'));

    // The stuck turn finishes later: its flush finds the seqs taken and writes nothing.
    release();
    await expect(stuckTurn).rejects.toThrow(ConcurrencyError);
    const stored = await store.readMessages('rt-7', 'main');
    expect(stored.map((m) => [m.seq, m.content])).toEqual([
      [1, 'Refund please'],
      [2, ''],
      [3, expect.stringContaining('billing')],
      [4, 'Answer to: Refund please'],
    ]);
  });
});
