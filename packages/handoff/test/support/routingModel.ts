/**
 * A model of the routing machine for property tests: random handoff graphs (a coordinator,
 * specialists, edges, return policies, a handoff limit), random routing events (handoffs to any
 * name, unknown and forbidden ones included), and the transition function the machine must follow,
 * written from docs/architecture.md's description rather than from the machine's code.
 */
import fc from 'fast-check';
import type { ReturnPolicy, RoutingConfig, RoutingContext, RoutingEvent, RoutingStateValue } from '../../src/index.js';

/** A random graph as plain data (fast-check prints it when a property fails). */
export interface GraphSpec {
  agents: string[];
  edges: [string, string][];
  policies: Record<string, ReturnPolicy>;
  maxHandoffsPerTurn: number;
}

/** A coordinator (`c`) and one to four specialists, any edges between them (self loops included). */
export const graphArbitrary: fc.Arbitrary<GraphSpec> = fc.integer({ min: 1, max: 4 }).chain((specialists) => {
  const agents = ['c', ...Array.from({ length: specialists }, (_, index) => `s${index + 1}`)];
  const pairs = agents.flatMap((from) => agents.map((to): [string, string] => [from, to]));
  return fc.record({
    agents: fc.constant(agents),
    edges: fc.subarray(pairs),
    policies: fc.record(
      Object.fromEntries(agents.map((agent) => [agent, fc.constantFrom<ReturnPolicy>('coordinator', 'previous')])),
    ) as fc.Arbitrary<Record<string, ReturnPolicy>>,
    maxHandoffsPerTurn: fc.integer({ min: 0, max: 4 }),
  });
});

/** The machine's configuration for a graph. */
export function routingConfigOf(graph: GraphSpec): RoutingConfig {
  const edges = new Map<string, Set<string>>();
  for (const [from, to] of graph.edges) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  return {
    coordinator: 'c',
    edges,
    maxHandoffsPerTurn: graph.maxHandoffsPerTurn,
    returnPolicyOf: (agent) => graph.policies[agent] ?? 'coordinator',
  };
}

/** Any routing event; handoff targets include every agent, an unknown name and the empty string. */
export function eventArbitrary(agents: readonly string[]): fc.Arbitrary<RoutingEvent> {
  return fc.oneof(
    fc.constant({ type: 'USER_TURN' as const }),
    {
      weight: 3,
      arbitrary: fc.constantFrom(...agents, 'unknown', '').map((target) => ({ type: 'HANDOFF' as const, target })),
    },
    fc.constant({ type: 'REPLY' as const }),
    fc.constant({ type: 'REQUEST' as const }),
    fc.constant({ type: 'RESUME' as const }),
    { weight: 1, arbitrary: fc.constant({ type: 'CLOSE' as const }) },
  );
}

/** The model's state: what the machine's snapshot must show. */
export interface ModelState {
  value: RoutingStateValue;
  context: RoutingContext;
}

/** The initial state: idle at the coordinator, no turn yet. */
export function initialModel(): ModelState {
  return {
    value: 'idle',
    context: { coordinator: 'c', activeAgent: 'c', previousAgent: null, turn: 0, handoffsThisTurn: 0 },
  };
}

/** Whether the graph lets `from` hand off to `to`. */
export function edgeAllowed(graph: GraphSpec, from: string, to: string): boolean {
  return graph.edges.some(([a, b]) => a === from && b === to);
}

/** The model's transition (events a state does not take leave it unchanged). */
export function stepModel(graph: GraphSpec, state: ModelState, event: RoutingEvent): ModelState {
  const { value, context } = state;
  if (value === 'closed') return state;
  if (event.type === 'CLOSE') return { value: 'closed', context };
  if (value === 'idle')
    return event.type === 'USER_TURN'
      ? { value: 'running', context: { ...context, turn: context.turn + 1, handoffsThisTurn: 0 } }
      : state;
  if (value === 'awaitingRequest') return event.type === 'RESUME' ? { value: 'running', context } : state;
  switch (event.type) {
    case 'HANDOFF':
      if (
        !edgeAllowed(graph, context.activeAgent, event.target) ||
        context.handoffsThisTurn >= graph.maxHandoffsPerTurn
      )
        return state;
      return {
        value,
        context: {
          ...context,
          previousAgent: context.activeAgent,
          activeAgent: event.target,
          handoffsThisTurn: context.handoffsThisTurn + 1,
        },
      };
    case 'REPLY': {
      const back = graph.policies[context.activeAgent] === 'coordinator' && context.activeAgent !== 'c';
      return {
        value: 'idle',
        context: back ? { ...context, previousAgent: context.activeAgent, activeAgent: 'c' } : context,
      };
    }
    case 'REQUEST':
      return { value: 'awaitingRequest', context };
    default:
      return state;
  }
}
