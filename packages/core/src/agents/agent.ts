import { ConfigurationError } from '../errors.js';
import type { ModelClient } from '../models/modelClient.js';
import type { Tool } from './tool.js';

/** An agent's instructions: fixed text, or text built per call from the session's state. */
export type Instructions = string | ((context: { sessionId: string; branchId: string; state: Readonly<Record<string, unknown>> }) => string);

/** An agent (docs/architecture.md): what it is, what it is told, which tools it has, which model it runs on. */
export interface Agent {
  /** 1–64 characters of `a-z A-Z 0-9 _ -`; unique among a workflow's participants. */
  readonly name: string;
  /** What other agents see when they may hand off to it. */
  readonly description: string;
  readonly instructions: Instructions;
  readonly tools: readonly Tool[];
  readonly model: ModelClient;
  /** Model calls allowed in one activation before `MaxStepsExceededError` (default 10). */
  readonly maxSteps: number;
}

/** What {@link agent} takes. */
export interface AgentOptions {
  name: string;
  description: string;
  instructions: Instructions;
  tools?: readonly Tool[];
  model: ModelClient;
  maxSteps?: number;
}

const AGENT_NAME = /^[a-zA-Z0-9_-]{1,52}$/;

/**
 * Defines an agent.
 *
 * @throws {ConfigurationError} for a name that cannot be part of a tool name (`handoff_to_<name>`),
 *   or two tools with one name
 * @example
 * ```ts
 * import { agent } from '@baton/core';
 * import { ScriptedModel } from '@baton/core/testing';
 * const billing = agent({
 *   name: 'billing',
 *   description: 'Refunds, double charges, invoices.',
 *   instructions: 'You resolve billing problems.',
 *   model: new ScriptedModel([{ text: 'Refund issued.' }]),
 * });
 * ```
 */
export function agent(options: AgentOptions): Agent {
  if (!AGENT_NAME.test(options.name)) {
    throw new ConfigurationError(`Agent name ${JSON.stringify(options.name)} must be 1-52 characters of a-z, A-Z, 0-9, "_" or "-".`);
  }
  const tools = options.tools ?? [];
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.name)) throw new ConfigurationError(`Agent ${JSON.stringify(options.name)} has two tools named ${JSON.stringify(t.name)}.`);
    seen.add(t.name);
  }
  return {
    name: options.name,
    description: options.description,
    instructions: options.instructions,
    tools,
    model: options.model,
    maxSteps: options.maxSteps ?? 10,
  };
}
