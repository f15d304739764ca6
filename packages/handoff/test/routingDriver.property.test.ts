/**
 * The direct routing stepper (what a session runs without an inspector) against the XState actor of
 * the same machine, side by side: random graphs, random event sequences (every event type, handoffs
 * to any name). After every event both stand in the same state with the same context and status,
 * agree on `can` for every event, and persist the same snapshot (values, key order, JSON); at random
 * points both are restored from that persisted snapshot (through JSON, as a checkpoint stores it)
 * and go on from there.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createRoutingMachine, type RoutingEvent } from '../src/index.js';
import { createRoutingDriver } from '../src/routing/routingDriver.js';
import { persistsDirectly, routingPersister } from '../src/routing/routingMachine.js';
import { eventArbitrary, graphArbitrary, routingConfigOf } from './support/routingModel.js';

const scenario = graphArbitrary.chain((graph) =>
  fc.record({
    graph: fc.constant(graph),
    steps: fc.array(
      fc.record({
        event: fc.oneof(eventArbitrary(graph.agents), fc.constant<RoutingEvent>({ type: 'DISCARD' })),
        restore: fc.boolean(),
      }),
      { maxLength: 40 },
    ),
  }),
);

function probes(agents: readonly string[]): RoutingEvent[] {
  const simple = (['USER_TURN', 'REPLY', 'REQUEST', 'RESUME', 'DISCARD', 'CLOSE'] as const).map((type) => ({ type }));
  return [...simple, ...[...agents, 'unknown'].map((target) => ({ type: 'HANDOFF' as const, target }))];
}

describe('routing driver (property)', () => {
  it('steps, answers `can` and persists exactly as the XState actor of the same machine', () => {
    fc.assert(
      fc.property(scenario, ({ graph, steps }) => {
        const config = routingConfigOf(graph);
        const machine = createRoutingMachine(config);
        const persist = routingPersister(machine);
        const options = { machine, config, persist, direct: true };
        let actor = createActor(machine).start();
        let driver = createRoutingDriver(options);
        expect(persistsDirectly(machine)).toBe(true);
        for (const { event, restore } of [{ event: undefined, restore: false }, ...steps]) {
          if (event !== undefined) {
            // A done XState actor ignores events (and warns); the driver gets them all and must ignore them too.
            if (actor.getSnapshot().status === 'active') actor.send(event);
            driver.send(event);
          }
          const expected = actor.getSnapshot();
          const got = driver.getSnapshot();
          expect({ value: got.value, context: got.context, status: got.status }).toEqual({
            value: expected.value,
            context: expected.context,
            status: expected.status,
          });
          for (const probe of probes(graph.agents)) expect(got.can(probe)).toBe(expected.can(probe));
          const persisted = driver.persist() as Record<string, unknown>;
          const xstate = machine.getPersistedSnapshot(expected) as Record<string, unknown>;
          expect(JSON.stringify(persisted)).toBe(JSON.stringify(xstate));
          expect(Object.keys(persisted)).toEqual(Object.keys(xstate));
          if (restore) {
            const stored = JSON.parse(JSON.stringify(persisted));
            actor.stop();
            actor = createActor(machine, { snapshot: JSON.parse(JSON.stringify(xstate)) }).start();
            driver = createRoutingDriver(options, stored);
            expect(driver.getSnapshot().context).toEqual(actor.getSnapshot().context);
          }
        }
        actor.stop();
      }),
      { seed: 15, numRuns: 300 },
    );
  });

  it('is an XState actor when an inspector is given (inspection sees every event), and the same otherwise', () => {
    const config = routingConfigOf({ agents: ['c', 's1'], edges: [['c', 's1']], policies: {}, maxHandoffsPerTurn: 2 });
    const machine = createRoutingMachine(config);
    const seen: string[] = [];
    const options = { machine, config, persist: routingPersister(machine), direct: true };
    const inspected = createRoutingDriver({
      ...options,
      inspect: (event) => (event.type === '@xstate.event' ? seen.push((event.event as { type: string }).type) : 0),
    });
    const direct = createRoutingDriver(options);
    for (const driver of [inspected, direct]) {
      driver.send({ type: 'USER_TURN' });
      driver.send({ type: 'HANDOFF', target: 's1' });
    }
    expect(seen).toEqual(['xstate.init', 'USER_TURN', 'HANDOFF']);
    expect(direct.getSnapshot().context).toEqual(inspected.getSnapshot().context);
    expect(direct.persist()).toEqual(inspected.persist());
  });

  it('snapshots are immutable: a persisted snapshot does not change when the machine moves on', () => {
    const config = routingConfigOf({ agents: ['c', 's1'], edges: [['c', 's1']], policies: {}, maxHandoffsPerTurn: 2 });
    const machine = createRoutingMachine(config);
    const driver = createRoutingDriver({ machine, config, persist: routingPersister(machine), direct: true });
    driver.send({ type: 'USER_TURN' });
    const before = driver.getSnapshot();
    const persisted = JSON.stringify(driver.persist());
    driver.send({ type: 'HANDOFF', target: 's1' });
    expect(JSON.stringify(before.context)).toBe(
      JSON.stringify({ coordinator: 'c', activeAgent: 'c', previousAgent: null, turn: 1, handoffsThisTurn: 0 }),
    );
    expect(persisted).not.toBe(JSON.stringify(driver.persist()));
    expect(driver.getSnapshot().context.activeAgent).toBe('s1');
  });
});
