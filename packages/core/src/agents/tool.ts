import { z } from 'zod';
import { ConfigurationError } from '../errors.js';
import type { StateAccess } from '../conversation/state.js';
import type { SessionAssets } from '../store/assets/sessionAssets.js';

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  sessionId: string;
  branchId: string;
  /** The agent that called the tool. */
  agent: string;
  toolCallId: string;
  /** Aborted when the turn is cancelled; long-running tools should stop. */
  signal: AbortSignal;
  /** Session- and branch-scoped state; change it only through `state.update`. */
  state: StateAccess;
  /**
   * The session's assets (files the user uploaded), when the runtime's store keeps them: read one
   * by the id a message's `metadata.assets` (and the model's view of it) names.
   * @example
   * ```ts
   * const stored = await context.assets?.get(assetId); // { ref, bytes } or undefined
   * ```
   */
  assets?: SessionAssets;
}

const CONTROL = Symbol.for('baton.toolControl');

/**
 * A tool result that moves control instead of (only) returning text: a handoff to another agent,
 * a request for user input (the turn pauses until the user answers), or the end of the conversation.
 * Built by {@link handoffControl}, {@link userInputControl} and {@link endConversationControl}.
 */
export type ToolControl =
  | { readonly [CONTROL]: true; kind: 'handoff'; target: string; reason?: string }
  | { readonly [CONTROL]: true; kind: 'user_input'; prompt: string }
  | { readonly [CONTROL]: true; kind: 'end_conversation'; reason: string };

/** A tool result asking the runtime to hand off to `target`. */
export function handoffControl(target: string, reason?: string): ToolControl {
  return reason === undefined
    ? { [CONTROL]: true, kind: 'handoff', target }
    : { [CONTROL]: true, kind: 'handoff', target, reason };
}

/** A tool result asking the runtime to pause the turn with a `user_input` request; the user's answer becomes the tool result. */
export function userInputControl(prompt: string): ToolControl {
  return { [CONTROL]: true, kind: 'user_input', prompt };
}

/** A tool result asking the runtime to close the session after this step. */
export function endConversationControl(reason: string): ToolControl {
  return { [CONTROL]: true, kind: 'end_conversation', reason };
}

/** Whether a tool's return value is a {@link ToolControl}. */
export function isToolControl(value: unknown): value is ToolControl {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONTROL] === true;
}

/** JSON Schema for the model's function definition. */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool as agents hold it. Build one with {@link tool}. `TArgs` defaults to `any` so tools of
 * different argument types fit one `Tool[]` (the arguments are validated by `parameters` at run time).
 */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous Tool[] needs a bivariant default; arguments are checked by zod at run time
export interface Tool<TArgs = any, TResult = unknown> {
  /** The function name the model calls (1–64 characters of `a-z A-Z 0-9 _ -`). */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The zod schema the model's arguments are validated with. */
  readonly parameters: z.ZodType<TArgs>;
  /** JSON Schema of `parameters` (zod v4's `z.toJSONSchema`), sent to the model. */
  readonly jsonSchema: JsonSchema;
  /** Whether a human must approve a call before it runs (a `tool_approval` request). */
  readonly needsApproval: boolean | ((args: TArgs, context: ToolContext) => boolean | Promise<boolean>);
  /**
   * Runs the tool with validated arguments. A string result is sent to the model as is, anything
   * else as JSON; a {@link ToolControl} moves control. A thrown error becomes an error result the model sees.
   */
  execute(args: TArgs, context: ToolContext): TResult | Promise<TResult>;
}

/** What {@link tool} takes. */
export interface ToolOptions<TSchema extends z.ZodType, TResult> {
  /** 1–64 characters of `a-z A-Z 0-9 _ -` (OpenAI's function-name rule). */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** A zod schema (usually `z.object`) the model's arguments are validated with; the model gets its JSON Schema. */
  parameters: TSchema;
  /** Runs the tool with validated arguments; see {@link Tool.execute}. */
  execute(args: z.output<TSchema>, context: ToolContext): TResult | Promise<TResult>;
  /** `true`, or a predicate on the arguments, to pause each call for a human's `tool_approval` (default `false`). */
  needsApproval?: boolean | ((args: z.output<TSchema>, context: ToolContext) => boolean | Promise<boolean>);
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool. Arguments from the model are validated with `parameters`; invalid arguments
 * become a tool error result the model sees (the agent loop goes on). A returned string is the
 * tool result as is; anything else is sent as JSON.
 *
 * @throws {ConfigurationError} when the name is not 1–64 characters of `a-z A-Z 0-9 _ -`
 * @example
 * ```ts
 * import { tool } from '@baton/core';
 * import { z } from 'zod';
 * const lookUpOrder = tool({
 *   name: 'look_up_order',
 *   description: 'Finds an order by its id.',
 *   parameters: z.object({ orderId: z.string() }),
 *   execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
 * });
 * ```
 */
export function tool<TSchema extends z.ZodType, TResult>(
  options: ToolOptions<TSchema, TResult>,
): Tool<z.output<TSchema>, TResult> {
  if (!TOOL_NAME.test(options.name)) {
    throw new ConfigurationError(
      `Tool name ${JSON.stringify(options.name)} must be 1-64 characters of a-z, A-Z, 0-9, "_" or "-".`,
    );
  }
  const jsonSchema = z.toJSONSchema(options.parameters, { target: 'draft-7', io: 'input' }) as JsonSchema;
  delete jsonSchema.$schema;
  return {
    name: options.name,
    description: options.description,
    parameters: options.parameters as z.ZodType<z.output<TSchema>>,
    jsonSchema,
    needsApproval: options.needsApproval ?? false,
    execute: options.execute,
  };
}

/**
 * Turns a tool's return value into the text of its tool result.
 * @returns the string itself, `''` for `undefined`, otherwise `JSON.stringify(value)`
 */
export function serializeToolResult(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value);
}
