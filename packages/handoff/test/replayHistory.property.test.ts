/**
 * Property test of replayHistory (docs/architecture.md invariant 6): replaying a history in one go, or split
 * at any point with the routing snapshot persisted (through JSON, as a checkpoint stores it) and
 * restored at the split, gives the same machine state, on random graphs and random histories
 * (user messages, replies, tool calls, handoff results to any name, ended conversations).
 */
import type { Message } from '@baton/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createRoutingMachine, replayHistory, routingState } from '../src/index.js';
import { graphArbitrary, routingConfigOf } from './support/routingModel.js';

type Kind =
  | { kind: 'user' }
  | { kind: 'reply' }
  | { kind: 'toolCall' }
  | { kind: 'toolResult' }
  | { kind: 'handoff'; target: string }
  | { kind: 'end' };

function kindArbitrary(agents: readonly string[]): fc.Arbitrary<Kind> {
  return fc.oneof(
    fc.constant({ kind: 'user' as const }),
    fc.constant({ kind: 'reply' as const }),
    fc.constant({ kind: 'toolCall' as const }),
    fc.constant({ kind: 'toolResult' as const }),
    {
      weight: 2,
      arbitrary: fc.constantFrom(...agents, 'unknown').map((target) => ({ kind: 'handoff' as const, target })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'end' as const }) },
  );
}

function toMessage(kind: Kind, index: number): Message {
  const base = {
    id: `m-${index + 1}`,
    seq: index + 1,
    content: `message ${index + 1}`,
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, index)).toISOString(),
  };
  switch (kind.kind) {
    case 'user':
      return { ...base, role: 'user' };
    case 'reply':
      return { ...base, role: 'assistant', agent: 'c' };
    case 'toolCall':
      return {
        ...base,
        role: 'assistant',
        agent: 'c',
        toolCalls: [{ id: `call-${index}`, name: 'look_up', arguments: '{}' }],
      };
    case 'toolResult':
      return { ...base, role: 'tool', toolCallId: `call-${index}`, toolName: 'look_up' };
    case 'handoff':
      return {
        ...base,
        role: 'tool',
        toolCallId: `call-${index}`,
        toolName: `handoff_to_${kind.target}`,
        metadata: { control: { kind: 'handoff', target: kind.target } },
      };
    case 'end':
      return {
        ...base,
        role: 'tool',
        toolCallId: `call-${index}`,
        toolName: 'end_conversation',
        metadata: { control: { kind: 'end_conversation', reason: 'done' } },
      };
  }
}

const scenario = graphArbitrary.chain((graph) =>
  fc.record({
    graph: fc.constant(graph),
    kinds: fc.array(kindArbitrary(graph.agents), { maxLength: 40 }),
    split: fc.nat(),
  }),
);

describe('replayHistory (property)', () => {
  it('gives the same machine state replayed in one go or split anywhere with the snapshot persisted and restored', () => {
    fc.assert(
      fc.property(scenario, ({ graph, kinds, split }) => {
        const machine = createRoutingMachine(routingConfigOf(graph));
        const messages = kinds.map(toMessage);
        const at = split % (messages.length + 1);

        const whole = createActor(machine).start();
        const wholeResult = replayHistory(whole, messages);

        const first = createActor(machine).start();
        replayHistory(first, messages.slice(0, at));
        const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
        first.stop();
        const resumed = createActor(machine, { snapshot: persisted }).start();
        const rest = replayHistory(resumed, messages.slice(at));

        expect({ value: routingState(resumed.getSnapshot()), context: resumed.getSnapshot().context }).toEqual({
          value: routingState(whole.getSnapshot()),
          context: whole.getSnapshot().context,
        });
        // The replies found after the split are the whole replay's replies after the split.
        if (rest.lastReply !== undefined) expect(wholeResult.lastReply).toEqual(rest.lastReply);
        whole.stop();
        resumed.stop();
      }),
      { seed: 11, numRuns: 300 },
    );
  });
});
