import { z } from 'zod';
import { ConfigurationError } from '../errors.js';
import type { ModelClient, OutputSchema } from '../models/modelClient.js';
import type { JsonSchema, Tool } from './tool.js';

/** An agent's instructions: fixed text, or text built per call from the session's state. */
export type Instructions =
  | string
  | ((context: { sessionId: string; branchId: string; state: Readonly<Record<string, unknown>> }) => string);

/**
 * An agent (docs/architecture.md): what it is, what it is told, which tools it has, which model it
 * runs on, and (with `outputType`) the type of its final answers.
 */
export interface Agent<TOutput = unknown> {
  /** 1–64 characters of `a-z A-Z 0-9 _ -`; unique among a workflow's participants. */
  readonly name: string;
  /** What other agents see when they may hand off to it. */
  readonly description: string;
  readonly instructions: Instructions;
  readonly tools: readonly Tool[];
  readonly model: ModelClient;
  /** Model calls allowed in one activation before `MaxStepsExceededError` (default 10). */
  readonly maxSteps: number;
  /** The zod schema final answers are validated with (structured output), when the agent has one. */
  readonly outputType?: z.ZodType<TOutput>;
  /** `outputType` as JSON Schema, sent to the model with every call of this agent. */
  readonly outputSchema?: OutputSchema;
  /**
   * `false`: a forcing tool choice stays forced after the agent's tool calls in a turn (see
   * {@link AgentOptions.resetToolChoice}). Absent or `true`: reset, the default.
   */
  readonly resetToolChoice?: boolean;
}

/** The type of an agent's structured output: `AgentOutput<typeof billing>`. */
export type AgentOutput<TAgent> = TAgent extends Agent<infer TOutput> ? TOutput : never;

/** What {@link agent} takes. */
export interface AgentOptions<TOutput = unknown> {
  name: string;
  description: string;
  instructions: Instructions;
  tools?: readonly Tool[];
  model: ModelClient;
  maxSteps?: number;
  /**
   * Structured output: a zod schema (usually `z.object`) every final answer must satisfy. The model
   * is asked for JSON of its JSON Schema (OpenAI `response_format` / `text.format`, the AI SDK's JSON
   * response format); the answer is parsed and validated with zod, a failure is told to the model
   * once, and the parsed value comes with the `message` event and the turn's result
   * (`structuredOutput`). Tool calls and handoffs work as without it.
   */
  outputType?: z.ZodType<TOutput>;
  /**
   * Whether a forcing tool choice (`'required'` or `{ name }`, from the turn's `modelSettings` or the
   * client's `toolChoice`) is dropped for the agent's next model calls once it has made tool calls in
   * the turn (default `true`, as the OpenAI Agents SDK's agent option `resetToolChoice`), so a forced
   * tool cannot loop. `false` keeps every call forced: for an agent that must answer through a tool
   * (its tool ends the activation, e.g. a handoff or `end_conversation`), bounded by `maxSteps`.
   */
  resetToolChoice?: boolean;
}

const AGENT_NAME = /^[a-zA-Z0-9_-]{1,52}$/;

/**
 * Defines an agent.
 *
 * @throws {ConfigurationError} for a name that cannot be part of a tool name (`handoff_to_<name>`),
 *   two tools with one name, or a `resetToolChoice` that is not a boolean
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
 * @example structured output
 * ```ts
 * import { agent } from '@baton/core';
 * import { ScriptedModel } from '@baton/core/testing';
 * import { z } from 'zod';
 * const triage = agent({
 *   name: 'triage',
 *   description: 'Sorts a request.',
 *   instructions: 'Classify the request.',
 *   model: new ScriptedModel([{ text: '{"topic":"billing","urgent":true}' }]),
 *   outputType: z.object({ topic: z.enum(['billing', 'shipping']), urgent: z.boolean() }),
 * });
 * ```
 */
export function agent<TOutput = unknown>(options: AgentOptions<TOutput>): Agent<TOutput> {
  if (!AGENT_NAME.test(options.name)) {
    throw new ConfigurationError(
      `Agent name ${JSON.stringify(options.name)} must be 1-52 characters of a-z, A-Z, 0-9, "_" or "-".`,
    );
  }
  const tools = options.tools ?? [];
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.name))
      throw new ConfigurationError(
        `Agent ${JSON.stringify(options.name)} has two tools named ${JSON.stringify(t.name)}.`,
      );
    seen.add(t.name);
  }
  if (options.resetToolChoice !== undefined && typeof options.resetToolChoice !== 'boolean')
    throw new ConfigurationError(
      `Agent ${JSON.stringify(options.name)}: resetToolChoice ${JSON.stringify(options.resetToolChoice)} ` +
        'is not a boolean; use true (the default: a forced tool choice is dropped after its tool calls) or false.',
    );
  const defined: Agent<TOutput> = {
    name: options.name,
    description: options.description,
    instructions: options.instructions,
    tools,
    model: options.model,
    maxSteps: options.maxSteps ?? 10,
    ...(options.resetToolChoice === false ? { resetToolChoice: false } : {}),
  };
  if (options.outputType === undefined) return defined;
  return {
    ...defined,
    outputType: options.outputType,
    outputSchema: { name: `${options.name}_output`, schema: outputJsonSchema(options) },
  };
}

/** The JSON Schema of an agent's `outputType` (what the answer must look like, zod's `io: 'output'`). */
function outputJsonSchema(options: AgentOptions<unknown>): JsonSchema {
  try {
    const schema = z.toJSONSchema(options.outputType!, { target: 'draft-7', io: 'output' }) as JsonSchema;
    delete schema.$schema;
    return schema;
  } catch (cause) {
    throw new ConfigurationError(
      `Agent ${JSON.stringify(options.name)} has an outputType that cannot be expressed as JSON Schema (${(cause as Error).message}); use plain zod types (objects, strings, numbers, enums, arrays).`,
      { cause },
    );
  }
}
