import { type Tool, tool } from '@baton/core';
import { z } from 'zod';
import type { HandoffRunResult, TurnOptions } from '../config/handoffTypes.js';

/** What `workflow.asTool()` takes: the tool's name and the description the calling model reads. */
export interface WorkflowToolOptions {
  name: string;
  description: string;
}

/** What {@link workflowTool} needs of a workflow (a `HandoffWorkflow`): its stateless `run`. */
export interface RunnableWorkflow {
  readonly name: string;
  run(input: string, options?: TurnOptions): Promise<HandoffRunResult>;
}

const WorkflowToolArguments = z.object({
  message: z
    .string()
    .min(1)
    .describe('What to ask, as one self-contained message (the workflow sees nothing else of this conversation).'),
});

/**
 * A workflow as a tool an agent can call (`workflow.asTool({ name, description })`): its argument is
 * `{ message }`, its result the text of the inner answer. Each call runs in a **throwaway session**
 * (the stateless `workflow.run(message)`: an in-memory session, nothing stored, no memory of earlier
 * calls); the caller's session keeps only the tool call and its result, like any tool's. The call is
 * cancelled with the turn. When an inner agent raises a request (asks the user, or waits for an
 * approval), the throwaway session cannot be resumed, so the call ends with an **error result** that
 * quotes what the workflow needed: the calling agent can ask the user itself and call again with a
 * fuller message. After a crash mid-call, the call runs again (at-least-once, as any tool).
 *
 * @example
 * ```ts
 * const assistant = agent({ name: 'assistant', description: 'Helps.', instructions: 'Use ask_billing for billing questions.', model, tools: [billing.asTool({ name: 'ask_billing', description: 'Asks the billing team.' })] });
 * ```
 */
export function workflowTool(
  workflow: RunnableWorkflow,
  options: WorkflowToolOptions,
): Tool<z.output<typeof WorkflowToolArguments>, string> {
  return tool({
    name: options.name,
    description: options.description,
    parameters: WorkflowToolArguments,
    execute: async ({ message }, context) => {
      const result = await workflow.run(message, { signal: context.signal });
      const [request] = result.pendingRequests;
      if (request !== undefined) {
        const need =
          request.type === 'tool_approval'
            ? `approval of ${request.toolName}`
            : `an answer to ${JSON.stringify(request.prompt)}`;
        throw new Error(
          `${workflow.name} could not finish: ${request.agent} needs ${need}. Ask for it yourself and call ${options.name} again with it in the message.`,
        );
      }
      if (result.output === undefined) throw new Error(`${workflow.name} ended without an answer.`);
      return result.output;
    },
  });
}
