import type { ContextProvider, Store } from '@baton/core';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import type { DeskAgents } from './deskAgents.js';

/** What {@link buildDeskWorkflow} takes. */
export interface DeskWorkflowOptions {
  agents: DeskAgents;
  store: Store;
  /** Memory (e.g. `EpisodicMemory`), which saves an episode when a session closes. */
  memory?: ContextProvider;
}

/**
 * Builds the support desk: triage coordinates and may hand off to every specialist, each specialist
 * may hand back to triage; each new customer turn starts at triage (which hands back to the
 * specialist already on the case); agents see the handoffs in their input (a specialist reads the
 * flow triage named, triage reads the flow a specialist handed a case back with); a checkpoint after every step, the last 5 kept per branch.
 *
 * @example
 * ```ts
 * const desk = buildDeskWorkflow({ agents, store: new FileStore({ directory: '.data' }) });
 * const session = await desk.session({ id: 'chat-1' });
 * ```
 */
export function buildDeskWorkflow(options: DeskWorkflowOptions): HandoffWorkflow {
  const { triage, specialists } = options.agents;
  let builder = new HandoffBuilder({ name: 'support-desk' })
    .participants(triage, ...specialists)
    .coordinator(triage)
    .handoffs(triage, specialists)
    .returnTo('coordinator')
    .handoffHistory('keep')
    .store(options.store)
    .checkpoints({ every: 'step', keep: { last: 5 } });
  for (const specialist of specialists) builder = builder.handoffs(specialist, [triage]);
  if (options.memory !== undefined) builder = builder.memory(options.memory);
  return builder.build();
}
