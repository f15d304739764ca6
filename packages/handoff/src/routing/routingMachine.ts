import { isDeepStrictEqual } from 'node:util';
import { type ActorRefFrom, and, assign, createActor, type SnapshotFrom, setup } from 'xstate';
import type { ReturnPolicy } from '../config/handoffTypes.js';

/** What the routing machine remembers: who coordinates, who acts, who acted before, which turn, how many handoffs so far in it. */
export interface RoutingContext {
  coordinator: string;
  activeAgent: string;
  previousAgent: string | null;
  /** Turns started so far (the first turn is 1). */
  turn: number;
  handoffsThisTurn: number;
}

/**
 * Events of the routing machine. `USER_TURN` starts a turn, `HANDOFF` moves control, `REPLY` ends
 * the turn with an answer to the user, `REQUEST` pauses on pending requests, `RESUME` continues
 * after they are answered, `DISCARD` gives up an unfinished turn (control returns as after an
 * answer), `CLOSE` ends the conversation.
 */
export type RoutingEvent =
  | { type: 'USER_TURN' }
  | { type: 'HANDOFF'; target: string }
  | { type: 'REPLY' }
  | { type: 'REQUEST' }
  | { type: 'RESUME' }
  | { type: 'DISCARD' }
  | { type: 'CLOSE' };

/** The graph and limits the machine's guards close over (so they never enter the persisted snapshot). */
export interface RoutingConfig {
  coordinator: string;
  /** Allowed handoffs: source agent → targets. */
  edges: ReadonlyMap<string, ReadonlySet<string>>;
  maxHandoffsPerTurn: number;
  /** Where control goes after `agent` answers the user. */
  returnPolicyOf(agent: string): ReturnPolicy;
}

/** The state values of the routing machine. */
export type RoutingStateValue = 'idle' | 'running' | 'awaitingRequest' | 'closed';

/** The guards of the routing machine (each closes over a {@link RoutingConfig}). */
type RoutingGuard = 'edgeAllowed' | 'underHandoffLimit';
/** The context updates of the routing machine. */
type RoutingAction = 'startTurn' | 'handOff' | 'returnControl';

/**
 * One transition: where it goes (none: it stays, an internal transition), the guards that must all
 * pass, and the context update it makes.
 */
export interface RoutingTransition {
  target?: RoutingStateValue;
  guards?: readonly RoutingGuard[];
  action?: RoutingAction;
}

/**
 * The routing machine's transitions, per state and event: the one definition both the XState machine
 * ({@link createRoutingMachine}) and the direct stepper ({@link createRoutingDriver}) are built from.
 * `closed` is final.
 */
export const ROUTING_TRANSITIONS: Readonly<
  Record<RoutingStateValue, Readonly<Partial<Record<RoutingEvent['type'], RoutingTransition>>>>
> = {
  idle: { USER_TURN: { target: 'running', action: 'startTurn' }, CLOSE: { target: 'closed' } },
  running: {
    HANDOFF: { guards: ['edgeAllowed', 'underHandoffLimit'], action: 'handOff' },
    REPLY: { target: 'idle', action: 'returnControl' },
    REQUEST: { target: 'awaitingRequest' },
    DISCARD: { target: 'idle', action: 'returnControl' },
    CLOSE: { target: 'closed' },
  },
  awaitingRequest: {
    RESUME: { target: 'running' },
    DISCARD: { target: 'idle', action: 'returnControl' },
    CLOSE: { target: 'closed' },
  },
  closed: {},
};

/** The guards, as pure functions of the configuration, the context and the event. */
export function routingGuards(
  config: RoutingConfig,
): Record<RoutingGuard, (context: RoutingContext, event: RoutingEvent) => boolean> {
  return {
    edgeAllowed: (context, event) =>
      event.type === 'HANDOFF' && (config.edges.get(context.activeAgent)?.has(event.target) ?? false),
    underHandoffLimit: (context) => context.handoffsThisTurn < config.maxHandoffsPerTurn,
  };
}

/** The context updates, as pure functions returning the changed fields. */
export function routingActions(
  config: RoutingConfig,
): Record<RoutingAction, (context: RoutingContext, event: RoutingEvent) => Partial<RoutingContext>> {
  return {
    startTurn: (context) => ({ turn: context.turn + 1, handoffsThisTurn: 0 }),
    handOff: (context, event) =>
      event.type === 'HANDOFF'
        ? {
            previousAgent: context.activeAgent,
            activeAgent: event.target,
            handoffsThisTurn: context.handoffsThisTurn + 1,
          }
        : {},
    returnControl: (context) =>
      config.returnPolicyOf(context.activeAgent) === 'coordinator' && context.activeAgent !== context.coordinator
        ? { previousAgent: context.activeAgent, activeAgent: context.coordinator }
        : {},
  };
}

/** The context a session starts with: the coordinator acts, no turn yet. */
export function initialRoutingContext(config: RoutingConfig): RoutingContext {
  return {
    coordinator: config.coordinator,
    activeAgent: config.coordinator,
    previousAgent: null,
    turn: 0,
    handoffsThisTurn: 0,
  };
}

/** The XState states config of {@link ROUTING_TRANSITIONS}. */
function xstateStates() {
  const states: Record<
    string,
    { on?: Record<string, { target?: string; guard?: unknown; actions?: string }>; type?: 'final' }
  > = {};
  for (const [state, transitions] of Object.entries(ROUTING_TRANSITIONS)) {
    const on: Record<string, { target?: string; guard?: unknown; actions?: string }> = {};
    for (const [event, transition] of Object.entries(transitions)) {
      const xstate: { target?: string; guard?: unknown; actions?: string } = {};
      if (transition.target !== undefined) xstate.target = transition.target;
      if (transition.guards !== undefined)
        xstate.guard = transition.guards.length === 1 ? transition.guards[0] : and([...transition.guards]);
      if (transition.action !== undefined) xstate.actions = transition.action;
      on[event] = xstate;
    }
    states[state] = Object.keys(on).length === 0 ? { type: 'final' } : { on };
  }
  return states;
}

/**
 * Builds the routing machine of docs/architecture.md: `idle` → `running` → (`running` after a `HANDOFF`,
 * `awaitingRequest`, or `idle` after a `REPLY`); `closed` is final. It is pure: no I/O, no model
 * calls. Guards and the return policy close over `config`, so the persisted snapshot holds only
 * the five context fields and the state value (about 200 bytes).
 *
 * @param config the handoff graph, the coordinator, the handoff limit and the return policy
 * @returns an XState v5 machine; persist it with `actor.getPersistedSnapshot()` and resume it with
 *   `createActor(machine, { snapshot })`
 * @example
 * ```ts
 * import { createActor } from 'xstate';
 * import { createRoutingMachine } from '@baton/handoff';
 * const machine = createRoutingMachine({
 *   coordinator: 'triage',
 *   edges: new Map([['triage', new Set(['billing'])], ['billing', new Set(['triage'])]]),
 *   maxHandoffsPerTurn: 5,
 *   returnPolicyOf: () => 'coordinator',
 * });
 * const actor = createActor(machine).start();
 * actor.send({ type: 'USER_TURN' });
 * actor.send({ type: 'HANDOFF', target: 'billing' });
 * actor.getSnapshot().context.activeAgent; // 'billing'
 * ```
 */
export function createRoutingMachine(config: RoutingConfig) {
  const guards = routingGuards(config);
  const actions = routingActions(config);
  return setup({
    types: { context: {} as RoutingContext, events: {} as RoutingEvent },
    guards: {
      edgeAllowed: ({ context, event }) => guards.edgeAllowed(context, event),
      underHandoffLimit: ({ context, event }) => guards.underHandoffLimit(context, event),
    },
    actions: {
      startTurn: assign(({ context, event }) => actions.startTurn(context, event)),
      handOff: assign(({ context, event }) => actions.handOff(context, event)),
      returnControl: assign(({ context, event }) => actions.returnControl(context, event)),
    },
  }).createMachine({
    id: 'handoff',
    initial: 'idle',
    context: initialRoutingContext(config),
    // Built from ROUTING_TRANSITIONS (typed there); the cast names the states for XState's types.
    states: xstateStates() as { idle: object; running: object; awaitingRequest: object; closed: { type: 'final' } },
  });
}

/** The machine {@link createRoutingMachine} builds. */
export type RoutingMachine = ReturnType<typeof createRoutingMachine>;
/** A running routing actor. */
export type RoutingActor = ActorRefFrom<RoutingMachine>;
/** A snapshot of the routing actor. */
export type RoutingSnapshot = SnapshotFrom<RoutingMachine>;

/** Builds the persisted form of a routing snapshot (what a checkpoint stores as `machine`). */
export type RoutingPersister = (snapshot: RoutingSnapshot) => unknown;

/**
 * `machine.getPersistedSnapshot(snapshot)`, built directly: XState's generic version copies the
 * snapshot with an object rest and spread that V8 runs in a slow path (~1.5 µs, once per checkpoint).
 * The routing machine has no child actors, no history states and no actor references in its context,
 * so its persisted form is the snapshot's JSON fields and context, in XState's key order. This is
 * checked once against XState's own result on the machine's initial snapshot (values and key order);
 * when they differ (another XState version), and for any snapshot with children or history, XState's
 * function is used.
 *
 * @returns a function from a snapshot to its persisted form
 */
export function routingPersister(machine: RoutingMachine): RoutingPersister {
  const xstate: RoutingPersister = (snapshot) => machine.getPersistedSnapshot(snapshot);
  if (!persistsDirectly(machine)) return xstate;
  return (snapshot) =>
    isEmpty(snapshot.children) && isEmpty(snapshot.historyValue) ? persistDirectly(snapshot) : xstate(snapshot);
}

/**
 * Whether {@link persistDirectly} gives XState's own persisted snapshot (values and key order) for
 * this XState version, checked on the machine's initial snapshot.
 */
export function persistsDirectly(machine: RoutingMachine): boolean {
  const probe = createActor(machine).getSnapshot();
  const expected = machine.getPersistedSnapshot(probe) as Record<string, unknown>;
  const direct = persistDirectly(probe);
  return Object.keys(direct).join() === Object.keys(expected).join() && isDeepStrictEqual(direct, expected);
}

/** A routing snapshot's persisted form, built directly (XState's form for a machine without children or history). */
export function persistDirectly(
  snapshot: Pick<RoutingSnapshot, 'status' | 'output' | 'error' | 'value' | 'context'>,
): Record<string, unknown> {
  return {
    status: snapshot.status,
    output: snapshot.output,
    error: snapshot.error,
    value: snapshot.value,
    historyValue: {},
    context: snapshot.context,
    children: {},
  };
}

function isEmpty(value: object | undefined): boolean {
  for (const _ in value) return false;
  return true;
}

/** The state a routing snapshot is in. */
export function routingState(snapshot: Pick<RoutingSnapshot, 'value'>): RoutingStateValue {
  return snapshot.value as RoutingStateValue;
}

/**
 * Why a handoff from the active agent to `target` would be refused, or `undefined` when it is allowed.
 *
 * @returns a sentence for the model, naming the limit or the allowed targets
 */
export function handoffRefusal(
  snapshot: Pick<RoutingSnapshot, 'value' | 'context' | 'can'>,
  target: string,
  config: RoutingConfig,
): string | undefined {
  if (snapshot.can({ type: 'HANDOFF', target })) return undefined;
  const { activeAgent, handoffsThisTurn } = snapshot.context;
  if (routingState(snapshot) !== 'running')
    return `No handoff is possible now: the conversation is ${routingState(snapshot)}.`;
  const allowed = config.edges.get(activeAgent);
  if (!allowed?.has(target)) {
    return `${activeAgent} may not hand off to ${JSON.stringify(target)}; allowed targets: ${[...(allowed ?? [])].join(', ') || '(none)'}.`;
  }
  return `This turn already had ${handoffsThisTurn} handoffs (maxHandoffsPerTurn ${config.maxHandoffsPerTurn}); answer the user yourself instead of handing off again.`;
}
