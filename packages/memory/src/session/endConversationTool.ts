import { endConversationControl, type Tool, type ToolControl, tool } from '@baton/core';
import { z } from 'zod';

/**
 * A tool named `end_conversation` that lets an agent close the session (e.g. when the user's issue
 * is resolved and they said goodbye). It returns core's `endConversationControl(reason)`: the agent
 * loop ends with outcome `end_conversation`, the runtime closes the session with that reason and
 * calls its context providers' `onSessionClose`, so episodic memory saves the episode.
 * Its parameters are `{ reason: string }` (trimmed, 1 to 200 characters); a call with a missing or
 * empty reason is answered with an error result to the model, and the session stays open.
 *
 * @example
 * ```ts
 * import { agent } from '@baton/core';
 * import { endConversationTool } from '@baton/memory';
 * const triage = agent({ name: 'triage', description: 'Greets and routes.', instructions: '…', model, tools: [endConversationTool] });
 * ```
 */
export const endConversationTool: Tool<{ reason: string }, ToolControl> = tool({
  name: 'end_conversation',
  description:
    'Ends and closes this conversation. Call it only when the user has nothing more to ask (their issue is resolved, or they said goodbye). ' +
    'Give the reason in a few words, e.g. "refund issued, user satisfied".',
  parameters: z.object({
    reason: z.string().trim().min(1).max(200).describe('Why the conversation ends, in a few words.'),
  }),
  execute: ({ reason }) => endConversationControl(reason),
});
