import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createRoutingMachine, handoffRefusal, type RoutingConfig, routingState } from '../src/index.js';

const config: RoutingConfig = {
  coordinator: 'triage',
  edges: new Map([
    ['triage', new Set(['billing', 'shipping'])],
    ['billing', new Set(['triage'])],
    ['shipping', new Set(['triage'])],
  ]),
  maxHandoffsPerTurn: 2,
  returnPolicyOf: (agent) => (agent === 'shipping' ? 'previous' : 'coordinator'),
};

describe('createRoutingMachine', () => {
  it('goes idle → running → idle, handing off along edges and returning per policy', () => {
    const actor = createActor(createRoutingMachine(config)).start();
    expect(routingState(actor.getSnapshot())).toBe('idle');
    actor.send({ type: 'USER_TURN' });
    actor.send({ type: 'HANDOFF', target: 'billing' });
    expect(actor.getSnapshot().context).toEqual({
      coordinator: 'triage',
      activeAgent: 'billing',
      previousAgent: 'triage',
      turn: 1,
      handoffsThisTurn: 1,
    });
    actor.send({ type: 'REPLY' });
    expect(routingState(actor.getSnapshot())).toBe('idle');
    expect(actor.getSnapshot().context.activeAgent).toBe('triage');

    actor.send({ type: 'USER_TURN' });
    expect(actor.getSnapshot().context).toMatchObject({ turn: 2, handoffsThisTurn: 0 });
    actor.send({ type: 'HANDOFF', target: 'shipping' });
    actor.send({ type: 'REPLY' });
    expect(actor.getSnapshot().context.activeAgent).toBe('shipping');
  });

  it('ignores forbidden edges and handoffs past the limit, and explains why', () => {
    const actor = createActor(createRoutingMachine(config)).start();
    actor.send({ type: 'USER_TURN' });
    actor.send({ type: 'HANDOFF', target: 'billing' });
    expect(handoffRefusal(actor.getSnapshot(), 'shipping', config)).toMatch(
      /billing may not hand off to "shipping"; allowed targets: triage/,
    );
    actor.send({ type: 'HANDOFF', target: 'shipping' });
    expect(actor.getSnapshot().context.activeAgent).toBe('billing');
    actor.send({ type: 'HANDOFF', target: 'triage' });
    expect(handoffRefusal(actor.getSnapshot(), 'billing', config)).toMatch(/maxHandoffsPerTurn 2/);
    actor.send({ type: 'HANDOFF', target: 'billing' });
    expect(actor.getSnapshot().context).toMatchObject({ activeAgent: 'triage', handoffsThisTurn: 2 });
    expect(handoffRefusal(actor.getSnapshot(), 'ghost', config)).toMatch(/"ghost"/);
  });

  it('pauses on requests, resumes, closes for good', () => {
    const actor = createActor(createRoutingMachine(config)).start();
    actor.send({ type: 'USER_TURN' });
    actor.send({ type: 'REQUEST' });
    expect(routingState(actor.getSnapshot())).toBe('awaitingRequest');
    actor.send({ type: 'HANDOFF', target: 'billing' });
    expect(actor.getSnapshot().context.activeAgent).toBe('triage');
    actor.send({ type: 'RESUME' });
    expect(routingState(actor.getSnapshot())).toBe('running');
    actor.send({ type: 'CLOSE' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(handoffRefusal(actor.getSnapshot(), 'billing', config)).toMatch(/closed/);
  });

  it('persists a small snapshot that createActor(machine, { snapshot }) resumes', () => {
    const machine = createRoutingMachine(config);
    const actor = createActor(machine).start();
    actor.send({ type: 'USER_TURN' });
    actor.send({ type: 'HANDOFF', target: 'billing' });
    const persisted = actor.getPersistedSnapshot();
    expect(JSON.stringify(persisted).length).toBeLessThan(300);
    const resumed = createActor(machine, { snapshot: JSON.parse(JSON.stringify(persisted)) }).start();
    expect(resumed.getSnapshot().context.activeAgent).toBe('billing');
    resumed.send({ type: 'REPLY' });
    expect(resumed.getSnapshot().context.activeAgent).toBe('triage');
  });
});
