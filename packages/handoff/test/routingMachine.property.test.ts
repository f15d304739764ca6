/**
 * Property tests of the routing machine against a model of its allowed transitions
 * (support/routingModel.ts): random graphs and random event sequences, handoffs to any name. After
 * every event the actor's state and context equal the model's, handoffs go only along edges and
 * never past maxHandoffsPerTurn, `handoffRefusal` agrees with the model, and the persisted snapshot
 * (through JSON, as a checkpoint stores it) restores to the same state; the sequence goes on from
 * the restored actor at random points.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createRoutingMachine, handoffRefusal, routingState } from '../src/index.js';
import { routingPersister } from '../src/routing/routingMachine.js';
import {
  edgeAllowed,
  eventArbitrary,
  graphArbitrary,
  initialModel,
  routingConfigOf,
  stepModel,
} from './support/routingModel.js';

const scenario = graphArbitrary.chain((graph) =>
  fc.record({
    graph: fc.constant(graph),
    steps: fc.array(fc.record({ event: eventArbitrary(graph.agents), restore: fc.boolean() }), { maxLength: 40 }),
  }),
);

describe('routing machine (property)', () => {
  it('follows the model of allowed transitions, and every persisted snapshot restores to the same state', () => {
    fc.assert(
      fc.property(scenario, ({ graph, steps }) => {
        const config = routingConfigOf(graph);
        const machine = createRoutingMachine(config);
        const persist = routingPersister(machine);
        let actor = createActor(machine).start();
        let model = initialModel();
        for (const { event, restore } of steps) {
          const before = actor.getSnapshot();
          const refusal = event.type === 'HANDOFF' ? handoffRefusal(before, event.target, config) : undefined;
          actor.send(event);
          const next = stepModel(graph, model, event);
          const snapshot = actor.getSnapshot();
          expect({ value: routingState(snapshot), context: snapshot.context }).toEqual(next);
          expect(snapshot.context.handoffsThisTurn).toBeLessThanOrEqual(graph.maxHandoffsPerTurn);
          if (event.type === 'HANDOFF') {
            const moved = next.context.handoffsThisTurn !== model.context.handoffsThisTurn;
            expect(refusal === undefined).toBe(moved);
            if (moved) expect(edgeAllowed(graph, model.context.activeAgent, event.target)).toBe(true);
          }
          model = next;

          const persisted = JSON.parse(JSON.stringify(persist(snapshot)));
          expect(persisted).toEqual(JSON.parse(JSON.stringify(machine.getPersistedSnapshot(snapshot))));
          const restored = createActor(machine, { snapshot: persisted }).start();
          expect({ value: routingState(restored.getSnapshot()), context: restored.getSnapshot().context }).toEqual(
            model,
          );
          if (restore) {
            actor.stop();
            actor = restored;
          } else {
            restored.stop();
          }
        }
        actor.stop();
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});
