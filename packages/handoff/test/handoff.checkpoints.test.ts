import { CheckpointCorruptError, InMemoryStore, NotFoundError, tool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents, lastOf, ofType, scriptedAgent } from './support/helpers.js';

describe('checkpoints', () => {
  it('stay bounded: after 1,000 turns the checkpoint is within 10% of its size after 10 (Done-when 2)', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(store)
      .build()
      .session({ id: 'k-1' });
    let atTen = 0;
    for (let turn = 1; turn <= 1000; turn += 1) {
      for await (const _ of session.send(`Question number ${turn}`)) {
        // run the turn
      }
      if (turn === 10) atTen = JSON.stringify(await store.loadCheckpoint('k-1', 'main')).length;
    }
    const atThousand = JSON.stringify(await store.loadCheckpoint('k-1', 'main')).length;
    expect(session.messages).toHaveLength(4000);
    expect(atThousand).toBeLessThanOrEqual(atTen * 1.1);
    expect(atThousand).toBeLessThan(2048);
    expect((await session.checkpoints()).length).toBe(5);
  });

  it("'turn' saves one at turn end; 'step' one per commit; 'manual' none for a handoff-only turn", async () => {
    const counts: Record<string, number> = {};
    for (const every of ['turn', 'step', 'manual'] as const) {
      const { triage, billing } = deskAgents();
      const workflow = new HandoffBuilder().participants(triage, billing).checkpoints({ every, keep: 'all' }).build();
      const session = await workflow.session({ id: `k-2-${every}` });
      const events = await collect(session.send('Question'));
      counts[every] = ofType(events, 'checkpoint').length;
      expect((await session.checkpoints()).length).toBe(counts[every]);
    }
    // Commits: user, triage's handoff call, its result, billing's answer; then the turn end. A handoff
    // call needs no checkpoint of its own (handoff tools are pure: a resumed step may run them again).
    expect(counts).toEqual({ turn: 1, step: 5, manual: 0 });
  });

  it('every mode saves a checkpoint right after an assistant message with tool calls, and on a pause', async () => {
    const lookUp = tool({
      name: 'look_up',
      description: 'Looks up.',
      parameters: z.object({}),
      execute: () => 'found',
    });
    for (const every of ['turn', 'manual'] as const) {
      const helper = scriptedAgent(
        'helper',
        (request) => {
          const last = lastOf(request);
          if (last?.role === 'user' && last.content === 'look')
            return { toolCalls: [{ name: 'look_up', arguments: {} }] };
          if (last?.role === 'user')
            return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Which?' } }] };
          return { text: 'done' };
        },
        [lookUp],
      );
      const session = await new HandoffBuilder()
        .participants(helper)
        .checkpoints({ every, keep: 'all' })
        .build()
        .session({ id: `k-2b-${every}` });
      const looked = await collect(session.send('look'));
      expect(ofType(looked, 'checkpoint').map((e) => e.checkpoint.throughSeq)).toEqual(every === 'turn' ? [2, 4] : [2]);
      const paused = await collect(session.send('ask'));
      expect(ofType(paused, 'checkpoint').map((e) => e.checkpoint.throughSeq)).toEqual([6, 6]);
    }
  });

  it("with 'manual' checkpoints a restore replays routing from the stored history", async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const build = () =>
      new HandoffBuilder()
        .participants(triage, billing)
        .returnTo('previous')
        .checkpoints({ every: 'manual' })
        .store(store)
        .build();
    const session = await build().session({ id: 'k-3' });
    await collect(session.send('One'));
    const fresh = await build().session({ id: 'k-3' });
    expect(fresh.activeAgent).toBe('billing');
    expect(fresh.routingState).toBe('idle');
    const events = await collect(fresh.send('Two'));
    expect(ofType(events, 'turn.completed')[0]!.turn).toBe(2);
    const manual = await fresh.checkpoint();
    expect(manual.throughSeq).toBe(6);
  });

  it('keeps the configured number; restore(id) recovers from a chosen checkpoint', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const workflow = new HandoffBuilder()
      .participants(triage, billing)
      .checkpoints({ keep: { last: 3 } })
      .store(store)
      .build();
    const session = await workflow.session({ id: 'k-4' });
    for (const text of ['a', 'b', 'c']) await collect(session.send(text));
    const manifest = await session.checkpoints();
    expect(manifest).toHaveLength(3);
    expect(manifest.map((c) => c.throughSeq)).toEqual([4, 8, 12]);
    await session.restore(manifest[0]!.id);
    const after = await session.checkpoints();
    expect(after.at(-1)).toMatchObject({ parentId: manifest[0]!.id, throughSeq: 12 });
    expect(session.routingState).toBe('idle');
    await expect(session.restore('missing')).rejects.toThrow(NotFoundError);
  });

  it('a damaged newest checkpoint is refused with CheckpointCorruptError; opening with checkpointId recovers', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const build = () =>
      new HandoffBuilder().participants(triage, billing).checkpoints({ keep: 'all' }).store(store).build();
    const session = await build().session({ id: 'k-5' });
    await collect(session.send('a'));
    const good = (await session.checkpoints()).at(-1)!;
    await store.saveCheckpoint({
      ...(await store.loadCheckpoint('k-5', 'main'))!,
      id: 'broken',
      machine: { value: 42 },
    });
    await expect(build().session({ id: 'k-5' })).rejects.toThrow(CheckpointCorruptError);
    const recovered = await build().session({ id: 'k-5', checkpointId: good.id });
    expect(recovered.routingState).toBe('idle');
    const events = await collect(recovered.send('b'));
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', turn: 2 });
  });

  it('a failed restore of a damaged checkpoint leaves the session usable: the next send continues from the newest checkpoint', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .checkpoints({ keep: 'all' })
      .store(store)
      .build()
      .session({ id: 'k-6' });
    await collect(session.send('a'));
    await store.saveCheckpoint({
      ...(await store.loadCheckpoint('k-6', 'main'))!,
      id: 'broken',
      machine: { value: 42 },
    });
    await collect(session.send('b'));

    await expect(session.restore('broken')).rejects.toThrow(CheckpointCorruptError);
    const events = await collect(session.send('c'));
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', turn: 3 });
    expect(ofType(events, 'handoff').map((e) => e.to)).toEqual(['billing']);
  });

  it('state changed by tools is saved at turn end; mid-turn it travels as patches in the checkpoint', async () => {
    const remember = tool({
      name: 'remember',
      description: 'Remembers that the user is verified.',
      parameters: z.object({}),
      execute: (_args, context) => {
        context.state.update('session', (draft) => {
          draft.verified = true;
        });
        context.state.update('branch', (draft) => {
          draft.step = 'verified';
        });
        return 'ok';
      },
    });
    const helper = scriptedAgent(
      'helper',
      (request) => {
        const last = lastOf(request);
        if (last?.role === 'user')
          return {
            toolCalls: [
              { name: 'remember', arguments: {} },
              { name: 'request_user_input', arguments: { prompt: 'Order?' } },
            ],
          };
        return { text: 'thanks' };
      },
      [remember],
    );
    const store = new InMemoryStore();
    const build = () => new HandoffBuilder().participants(helper).store(store).build();
    const session = await build().session({ id: 'k-6' });
    await collect(session.send('verify me'));
    const paused = await store.loadCheckpoint('k-6', 'main');
    expect(paused!.statePatches.session).toEqual([{ op: 'add', path: ['verified'], value: true }]);
    expect((await store.getSession('k-6'))!.state).toEqual({});

    const fresh = await build().session({ id: 'k-6' });
    await collect(fresh.send('Order 1234'));
    expect((await store.getSession('k-6'))!.state).toEqual({ verified: true });
    expect((await store.getBranch('k-6', 'main'))!.state).toEqual({ step: 'verified' });
    expect((await store.loadCheckpoint('k-6', 'main'))!.statePatches).toEqual({ session: [], branch: [] });
  });
});
