import type { Tool } from '@baton/core';
import type { HandoffConfig } from '../config/handoffTypes.js';
import type { ModelInputShaper } from '../config/modelInputShaper.js';
import type { RoutingConfig, RoutingMachine, RoutingPersister } from '../routing/routingMachine.js';

/** What every session runtime of one workflow shares: the configuration, the machine, tool templates, per-session locks. */
export interface WorkflowCore {
  config: HandoffConfig;
  routing: RoutingConfig;
  machine: RoutingMachine;
  /** The persisted form of a routing snapshot, for checkpoints (see `routingPersister`). */
  persistRouting: RoutingPersister;
  /** Whether sessions may run the routing machine as the direct stepper (see `createRoutingDriver`). */
  directRouting: boolean;
  handoffTemplates: ReadonlyMap<string, Tool>;
  /** The history window and every provider's `prepareModelInput`, composed in order; `undefined` when none shapes. */
  prepareModelInput: ModelInputShaper | undefined;
  /** Marks this workflow's session objects of every branch of a session outdated (a close wrote to them all). */
  outdateSession(sessionId: string): void;
}
