import { type BatonEvent, InMemoryStore, type Message, type Store, tool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, deskAgents, scriptedAgent, lastOf } from './support/helpers.js';

/**
 * A checkpoint means the same in every mode (invariant 7): the routing machine in it has applied every
 * message through its `throughSeq`. These tests leave an event stream right after a `checkpoint` event
 * (what a crash at that point leaves in the store), open the session in a fresh workflow and resume it.
 */
describe("'step' checkpoints agree with the history they point at", () => {
  const build = (store: Store) => {
    const { triage, billing } = deskAgents();
    return new HandoffBuilder({ name: 'desk' })
      .participants(triage, billing)
      .store(store)
      .checkpoints({ every: 'step', keep: 'all' })
      .build();
  };

  /** Runs `send(text)` until the `n`-th checkpoint event, then leaves the stream. */
  async function leaveAtCheckpoint(store: Store, id: string, n: number): Promise<BatonEvent[]> {
    const session = await build(store).session({ id });
    const seen: BatonEvent[] = [];
    let checkpoints = 0;
    for await (const event of session.send('I was charged twice')) {
      seen.push(event);
      if (event.type === 'checkpoint' && ++checkpoints === n) break;
    }
    return seen;
  }

  for (const n of [1, 2, 3, 4]) {
    it(`a session left at checkpoint ${n} of a handoff turn resumes to the same history as an uninterrupted turn`, async () => {
      const store = new InMemoryStore();
      await leaveAtCheckpoint(store, `step-${n}`, n);
      const session = await build(store).session({ id: `step-${n}` });
      await collect(session.resume());
      const stored = await store.readMessages(`step-${n}`, 'main');
      expect(
        stored.map((m) => `${m.role}:${m.agent ?? '-'}:${m.content || m.toolCalls?.map((c) => c.name).join()}`),
      ).toEqual([
        'user:-:I was charged twice',
        'assistant:triage:handoff_to_billing',
        'tool:triage:Transferred to billing.',
        'assistant:billing:Answer to: I was charged twice',
      ]);
      expect(danglingToolCalls(stored)).toEqual([]);
      expect(session.activeAgent).toBe('triage'); // returned to the coordinator after billing answered
    });
  }

  describe('a specialist with an approval-gated tool', () => {
    const makeWorkflow = (store: Store, runs: string[]) => {
      const refund = tool({
        name: 'refund',
        description: 'Refunds an order.',
        parameters: z.object({ orderId: z.string() }),
        needsApproval: true,
        execute: async ({ orderId }) => {
          runs.push(orderId);
          return { refunded: orderId };
        },
      });
      const triage = scriptedAgent('triage', (request) =>
        lastOf(request)?.role === 'user'
          ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
          : { text: 'Anything else?' },
      );
      const billing = scriptedAgent(
        'billing',
        (request) =>
          lastOf(request)?.role === 'tool'
            ? { text: `Done: ${lastOf(request)?.content}` }
            : { toolCalls: [{ name: 'refund', arguments: { orderId: '42' } }] },
        [refund],
      );
      return new HandoffBuilder({ name: 'desk' })
        .participants(triage, billing)
        .store(store)
        .checkpoints({ every: 'step', keep: 'all' })
        .build();
    };
    /** Drives the conversation to its end from whatever the store holds: resume, approve what waits. */
    const finish = async (store: Store, id: string, runs: string[]) => {
      const session = await makeWorkflow(store, runs).session({ id });
      await collect(session.resume());
      for (const request of session.pendingRequests) await collect(session.respond(request.id, { approved: true }));
      return store.readMessages(id, 'main');
    };
    const transcript = (messages: readonly Message[]) =>
      messages.map((m) => `${m.role}:${m.agent ?? '-'}:${m.content || m.toolCalls?.map((c) => c.name).join()}`);

    it('every checkpoint of the turn, left and resumed in a fresh workflow, ends with the uninterrupted transcript; the tool runs once', async () => {
      const reference = new InMemoryStore();
      const referenceRuns: string[] = [];
      const first = await makeWorkflow(reference, referenceRuns).session({ id: 'ref' });
      const events = await collect(first.send('refund order 42'));
      const total = events.filter((e) => e.type === 'checkpoint').length;
      const expected = transcript(await finish(reference, 'ref', referenceRuns));
      expect(expected).toEqual([
        'user:-:refund order 42',
        'assistant:triage:handoff_to_billing',
        'tool:triage:Transferred to billing.',
        'assistant:billing:refund',
        'tool:billing:{"refunded":"42"}',
        'assistant:billing:Done: {"refunded":"42"}',
      ]);
      expect(referenceRuns).toEqual(['42']);
      expect(total).toBeGreaterThanOrEqual(4);

      for (let n = 1; n <= total; n += 1) {
        const store = new InMemoryStore();
        const runs: string[] = [];
        await leaveAt(makeWorkflow(store, runs), `left-${n}`, 'refund order 42', n);
        const stored = await finish(store, `left-${n}`, runs);
        expect(transcript(stored), `left at checkpoint ${n}`).toEqual(expected);
        expect(danglingToolCalls(stored)).toEqual([]);
        expect(runs, `left at checkpoint ${n}`).toEqual(['42']);
      }
    });
  });
});

/** Runs `send(text)` until the `n`-th checkpoint event, then leaves the stream. */
async function leaveAt(
  workflow: { session(options: { id: string }): Promise<{ send(text: string): AsyncIterable<BatonEvent> }> },
  id: string,
  text: string,
  n: number,
) {
  const session = await workflow.session({ id });
  let checkpoints = 0;
  for await (const event of session.send(text)) if (event.type === 'checkpoint' && ++checkpoints === n) break;
}
