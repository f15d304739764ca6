import { type Tool, tool, userInputControl } from '@baton/core';
import { z } from 'zod';

/** The name of the built-in tool that asks the user a question. */
export const REQUEST_USER_INPUT = 'request_user_input';

/**
 * The built-in `request_user_input({ prompt })` tool every participant agent is offered: it pauses
 * the turn with a `user_input` request; the user's answer (via `session.respond(id, text)`, or
 * `session.send(text)` when it is the only pending request) becomes this tool call's result.
 *
 * @example
 * ```ts
 * import { requestUserInputTool } from '@baton/handoff';
 * requestUserInputTool.name; // 'request_user_input'
 * ```
 */
export const requestUserInputTool: Tool<{ prompt: string }> = tool({
  name: REQUEST_USER_INPUT,
  description:
    "Ask the user a question and wait for the answer (e.g. an order number or an account id). The answer comes back as this tool call's result.",
  parameters: z.object({ prompt: z.string().min(1).describe('The question to show the user.') }),
  execute: ({ prompt }) => userInputControl(prompt),
});
