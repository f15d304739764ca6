import type { BatonEvent, Tool } from '@baton/core';
import { bindHandoffTool } from '../routing/handoffTools.js';
import { requestUserInputTool } from '../routing/requestUserInput.js';
import type { RoutingPosition } from '../routing/routingDriver.js';
import { handoffRefusal } from '../routing/routingMachine.js';
import type { WorkflowCore } from './workflowCore.js';

/** The session branch whose routing position a handoff is checked against, and where a refusal is raised. */
export interface HandoffSite {
  readonly sessionId: string;
  readonly branchId: string;
  /** The routing position now (read when a handoff tool runs). */
  readonly snapshot: RoutingPosition;
  raise(event: BatonEvent): void;
}

/**
 * The tools the runtime adds for `agent`: one handoff tool per allowed edge (refused, with a
 * non-fatal `HANDOFF_REFUSED` error event, when the routing position does not allow it then), and
 * `request_user_input`.
 */
export function agentTools(core: WorkflowCore, agent: string, site: HandoffSite): Tool[] {
  const tools = [...(core.routing.edges.get(agent) ?? [])].map((target) =>
    bindHandoffTool(
      core.handoffTemplates.get(target)!,
      target,
      (to) => handoffRefusal(site.snapshot, to, core.routing),
      (refusal) =>
        site.raise({
          type: 'error',
          sessionId: site.sessionId,
          branchId: site.branchId,
          code: 'HANDOFF_REFUSED',
          message: refusal,
          fatal: false,
        }),
    ),
  );
  tools.push(requestUserInputTool);
  return tools;
}
