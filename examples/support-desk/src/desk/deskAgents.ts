import { type Agent, agent, type ModelClient } from '@baton/core';
import { endConversationTool } from '@baton/memory';
import type { Ontology } from '../data/ontology.js';
import { createActionTools } from '../tools/actionTools.js';
import type { WorldDirectory } from '../tools/world.js';
import { SPECIALISTS, TRIAGE } from './specialists.js';

/** The model each participant runs on: the coordinator's and one per specialist. */
export interface DeskModels {
  /** The triage coordinator's model. */
  triage: ModelClient;
  /**
   * The model of the specialist named `name` (one of `SPECIALISTS`).
   * @throws {ConfigurationError} for a name it has no model for
   */
  specialist(name: string): ModelClient;
}

/** The desk's agents: the triage coordinator first, then the six specialists. */
export interface DeskAgents {
  triage: Agent;
  specialists: Agent[];
}

function triageInstructions(ontology: Ontology): string {
  const routes = SPECIALISTS.map((spec) => `- ${spec.name}: ${spec.flows.join(', ')}`).join('\n');
  return [
    "You are the triage coordinator of AcmeCorp's customer support desk (a clothing store).",
    'Find out what the customer needs and hand the conversation to the specialist who covers it. Never solve the problem yourself.',
    'When the customer has only greeted you, ask how you can help with request_user_input.',
    `When you hand off, set the reason to "flow <flow>", naming exactly one of ABCD's flows (${ontology.flows.join(', ')}).`,
    `Specialists and the flows they cover:\n${routes}`,
  ].join('\n');
}

function specialistInstructions(name: string, flows: readonly string[], ontology: Ontology): string {
  const steps = flows
    .flatMap((flow) =>
      (ontology.subflows[flow] ?? []).map(
        (subflow) => `- ${flow}/${subflow}: ${(ontology.sequences[subflow] ?? []).join(' → ')}`,
      ),
    )
    .join('\n');
  return [
    `You are the ${name} specialist of AcmeCorp's customer support desk (a clothing store), covering ${flows.join(' and ')}.`,
    "Work through the company's guideline for the customer's case, calling the console actions in order.",
    'Ask the customer for any detail an action needs (full name or account ID, order ID, username, email, amount) with request_user_input, one question at a time.',
    'When you are done, tell the customer what you did in one or two sentences, name the case as "case <subflow>" (e.g. "case refund_initiate"), and ask whether there is anything else.',
    'When the customer then says goodbye or that is all, call end_conversation with the reason "case <subflow>: resolved".',
    `Guidelines (case: actions in order):\n${steps}`,
  ].join('\n');
}

/**
 * Builds the desk's agents: `triage` (the coordinator, no tools of its own: the runtime offers it the
 * handoffs and `request_user_input`) and the six specialists, each holding the console actions its
 * flows use (tools built from ontology.json) and `end_conversation` to close a resolved conversation. The same definitions run offline or on OpenAI: only
 * `models` differ.
 *
 * @param worlds where the tools find each session's customers and orders
 * @example
 * ```ts
 * const { triage, specialists } = createDeskAgents(ontology, models, new WorldDirectory());
 * ```
 */
export function createDeskAgents(ontology: Ontology, models: DeskModels, worlds: WorldDirectory): DeskAgents {
  const tools = createActionTools(ontology, worlds);
  const triage = agent({
    name: TRIAGE,
    description: 'Greets the customer, finds out what they need and routes them to a specialist.',
    instructions: triageInstructions(ontology),
    model: models.triage,
  });
  const specialists = SPECIALISTS.map((spec) => {
    const actions = new Set(
      spec.flows.flatMap((flow) =>
        (ontology.subflows[flow] ?? []).flatMap((subflow) => ontology.sequences[subflow] ?? []),
      ),
    );
    return agent({
      name: spec.name,
      description: spec.description,
      instructions: specialistInstructions(spec.name, spec.flows, ontology),
      tools: [...[...actions].sort().map((action) => tools.get(action)!), endConversationTool],
      model: models.specialist(spec.name),
      maxSteps: 24,
    });
  });
  return { triage, specialists };
}
