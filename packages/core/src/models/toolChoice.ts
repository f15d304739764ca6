import { z } from 'zod';
import { ConfigurationError, InvalidInputError } from '../errors.js';
import type { ModelRequest } from './modelClient.js';

/**
 * Whether and which tool the model must call: `'auto'` (the model decides; providers' default),
 * `'required'` (some tool), `'none'` (no tool, answer in text), or `{ name }` (exactly that tool).
 * The same choices as OpenAI's `tool_choice` and the AI SDK's `toolChoice`; a tool is named by an
 * object so that a tool called `auto` stays unambiguous.
 *
 * @example
 * ```ts
 * import type { ToolChoice } from '@baton/core';
 * const forced: ToolChoice = { name: 'look_up_order' };
 * await session.send('Where is A-17?', { modelSettings: { toolChoice: 'required' } });
 * ```
 */
export type ToolChoice = 'auto' | 'required' | 'none' | { name: string };

/** The zod schema of a {@link ToolChoice} (a named tool: 1 or more characters, no other keys). */
export const ToolChoiceSchema: z.ZodType<ToolChoice> = z.union([
  z.enum(['auto', 'required', 'none']),
  z.strictObject({ name: z.string().min(1) }),
]);

/**
 * Whether `choice` makes the model call a tool (`'required'` or a named tool).
 *
 * @example
 * ```ts
 * forcesToolCall({ name: 'look_up_order' }); // true
 * forcesToolCall('auto'); // false
 * ```
 */
export function forcesToolCall(choice: ToolChoice | undefined): boolean {
  return choice === 'required' || (typeof choice === 'object' && choice !== null);
}

/**
 * Checks a model client's default `toolChoice` option when the client is built.
 *
 * @param choice the option as given (`undefined` passes)
 * @param where the client, for the message, e.g. `'OpenAIChatModel "gpt-4.1-mini"'`
 * @throws {ConfigurationError} when `choice` is not a {@link ToolChoice}
 * @example
 * ```ts
 * checkToolChoiceOption(options.toolChoice, `OpenAIChatModel ${JSON.stringify(options.model)}`);
 * ```
 */
export function checkToolChoiceOption(choice: unknown, where: string): void {
  if (choice !== undefined && !ToolChoiceSchema.safeParse(choice).success)
    throw new ConfigurationError(`${where}: toolChoice ${describe(choice)} is not ${ALLOWED}.`);
}

/**
 * The tool choice one model call sends, or `undefined` to send none (the provider's default, auto):
 * the call's `settings.toolChoice`, else the client's default. Left out when the request offers no
 * tools (`'auto'` / `'none'` mean nothing then; OpenAI rejects `tool_choice` without `tools`), and a
 * forcing choice is left out when `request.resetToolChoice` is set (see {@link ModelRequest}).
 *
 * @param request the model call
 * @param clientDefault the client's `toolChoice` option
 * @param where the call, for messages, e.g. `'OpenAI chat completion for model "gpt-4.1-mini"'`
 * @throws {InvalidInputError} when `settings.toolChoice` is malformed, forces a tool call with no tools offered,
 *   or names a tool the request does not offer
 * @throws {ConfigurationError} for the same faults in the client's default
 * @example
 * ```ts
 * const choice = resolveToolChoice(request, this.#options.toolChoice, where);
 * if (choice !== undefined) params.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: choice };
 * ```
 */
export function resolveToolChoice(
  request: ModelRequest,
  clientDefault: ToolChoice | undefined,
  where: string,
): ToolChoice | undefined {
  const fromCall = request.settings?.toolChoice !== undefined;
  const choice = fromCall ? request.settings?.toolChoice : clientDefault;
  if (choice === undefined) return undefined;
  const source = fromCall ? 'modelSettings.toolChoice' : "the client's toolChoice option";
  const by = request.agent === undefined ? '' : ` by agent ${JSON.stringify(request.agent)}`;
  const fail = (problem: string) =>
    fromCall ? new InvalidInputError(`${where}${by}: ${problem}`) : new ConfigurationError(`${where}${by}: ${problem}`);
  // A turn's settings reach every agent of the turn, including those without the tool.
  const hint = fromCall
    ? " A turn's modelSettings apply to every agent; to force one agent, set its client's toolChoice."
    : '';
  if (!ToolChoiceSchema.safeParse(choice).success) throw fail(`${source} ${describe(choice)} is not ${ALLOWED}.`);
  if (request.resetToolChoice === true && forcesToolCall(choice)) return undefined;
  if (request.tools.length === 0) {
    if (forcesToolCall(choice))
      throw fail(
        `${source} ${describe(choice)} forces a tool call, but the request offers no tools. Give the agent tools or use 'auto'.${hint}`,
      );
    return undefined;
  }
  if (typeof choice === 'object' && !request.tools.some((t) => t.name === choice.name)) {
    const offered = request.tools.map((t) => JSON.stringify(t.name)).join(', ');
    throw fail(
      `${source} names tool ${JSON.stringify(choice.name)}, which the request does not offer (it offers ${offered}). Name one of those.${hint}`,
    );
  }
  return choice;
}

const ALLOWED = "'auto', 'required', 'none' or { name: '<tool name>' }";

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
}
