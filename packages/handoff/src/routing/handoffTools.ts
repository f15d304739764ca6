import { type Executor, handoffControl, type Tool, tool } from '@baton/core';
import { z } from 'zod';

/** The prefix of every handoff tool's name: `handoff_to_<agent>`. */
export const HANDOFF_TOOL_PREFIX = 'handoff_to_';

/** The name of the tool that hands off to `agent`. */
export function handoffToolName(agent: string): string {
  return `${HANDOFF_TOOL_PREFIX}${agent}`;
}

/** Whether a tool name is a handoff tool's (`handoff_to_…`), known target or not. */
export function isHandoffToolName(name: string | undefined): boolean {
  return name?.startsWith(HANDOFF_TOOL_PREFIX) === true;
}

const HandoffArguments = z.object({
  reason: z.string().optional().describe('Why you hand off, in one sentence, for the receiving agent and the logs.'),
});

/**
 * Decides at call time whether a handoff may happen now.
 * @returns `undefined` to allow it, or the refusal the model will read (e.g. the handoff limit is reached)
 */
export type HandoffCheck = (target: string) => string | undefined;

/**
 * Builds `handoff_to_<target>`: described by the target's description, with an optional `reason`.
 * Its `execute` asks `check` first: a refusal is thrown (core turns it into an error tool result the
 * model sees, and the turn goes on) after `onRefused` was told; otherwise it returns core's
 * `handoffControl(target, reason)`, and the agent loop ends the activation with a handoff.
 *
 * @param target the participant control moves to
 * @param check called on every call; see {@link HandoffCheck}
 * @param onRefused called with the refusal before it is thrown (e.g. to emit an `error` event)
 * @example
 * ```ts
 * const toBilling = createHandoffTool(billing, () => undefined, () => {});
 * toBilling.name; // 'handoff_to_billing'
 * ```
 */
export function createHandoffTool(
  target: Pick<Executor, 'name' | 'description'>,
  check: HandoffCheck,
  onRefused: (refusal: string) => void,
): Tool {
  return bindHandoffTool(handoffToolTemplate(target), target.name, check, onRefused);
}

/** The handoff tool without its behaviour: name, description and schema, built once per target (JSON Schema generation is not free). */
export function handoffToolTemplate(target: Pick<Executor, 'name' | 'description'>): Tool {
  return tool({
    name: handoffToolName(target.name),
    description: `Hand the conversation to ${target.name}: ${target.description}`,
    parameters: HandoffArguments,
    execute: () => handoffControl(target.name),
  });
}

/** A copy of a handoff tool template whose `execute` checks the routing machine before handing off. */
export function bindHandoffTool(
  template: Tool,
  target: string,
  check: HandoffCheck,
  onRefused: (refusal: string) => void,
): Tool {
  return {
    ...template,
    execute: (args: z.output<typeof HandoffArguments>) => {
      const refusal = check(target);
      if (refusal !== undefined) {
        onRefused(refusal);
        throw new Error(refusal);
      }
      return handoffControl(target, args.reason);
    },
  };
}
