import { isDeepStrictEqual } from 'node:util';
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createRoutingMachine, type RoutingEvent, routingPersister } from '../src/routing/routingMachine.js';

const machine = createRoutingMachine({
  coordinator: 'triage',
  edges: new Map([
    ['triage', new Set(['billing'])],
    ['billing', new Set(['triage'])],
  ]),
  maxHandoffsPerTurn: 2,
  returnPolicyOf: () => 'coordinator',
});

describe('routingPersister', () => {
  it("gives XState's persisted snapshot (same values, same key order) in every state of a conversation", () => {
    const persist = routingPersister(machine);
    const actor = createActor(machine).start();
    const events: RoutingEvent[] = [
      { type: 'USER_TURN' },
      { type: 'HANDOFF', target: 'billing' },
      { type: 'HANDOFF', target: 'nobody' },
      { type: 'REQUEST' },
      { type: 'RESUME' },
      { type: 'REPLY' },
      { type: 'USER_TURN' },
      { type: 'CLOSE' },
    ];
    const states = new Set<string>();
    for (const event of [undefined, ...events]) {
      if (event !== undefined) actor.send(event);
      const expected = actor.getPersistedSnapshot() as Record<string, unknown>;
      const direct = persist(actor.getSnapshot()) as Record<string, unknown>;
      expect(isDeepStrictEqual(direct, expected)).toBe(true);
      expect(Object.keys(direct)).toEqual(Object.keys(expected));
      expect(JSON.stringify(direct)).toBe(JSON.stringify(expected));
      states.add(String(actor.getSnapshot().value));
    }
    expect([...states].sort()).toEqual(['awaitingRequest', 'closed', 'idle', 'running']);
  });

  it('restores: a snapshot persisted directly resumes an actor in the same state', () => {
    const persist = routingPersister(machine);
    const actor = createActor(machine).start();
    actor.send({ type: 'USER_TURN' });
    actor.send({ type: 'HANDOFF', target: 'billing' });
    const restored = createActor(machine, {
      snapshot: JSON.parse(JSON.stringify(persist(actor.getSnapshot()))),
    }).start();
    expect(restored.getSnapshot().value).toBe('running');
    expect(restored.getSnapshot().context).toEqual(actor.getSnapshot().context);
  });
});
