import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ModelMessage } from '../conversation/message.js';
import { InvalidInputError } from '../errors.js';
import type { ToolDefinition } from '../models/modelClient.js';
import { recalledContext } from '../models/recalledContext.js';

/**
 * Baton model messages as Chat Completions `messages` (wire format:
 * https://platform.openai.com/docs/api-reference/chat/create): `system` → system, `context` → a
 * system message prefixed as recalled context, `user` → user, `assistant` → assistant with
 * `tool_calls` when it made any, `tool` → tool with `tool_call_id`.
 *
 * @throws {InvalidInputError} when a `tool` message has no `toolCallId`, or a role is unknown
 * @example
 * ```ts
 * toChatMessages([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
 * // [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]
 * ```
 */
export function toChatMessages(messages: readonly ModelMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message, index): ChatCompletionMessageParam => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'context':
        return { role: 'system', content: recalledContext(message.content) };
      case 'user':
        return { role: 'user', content: message.content };
      case 'assistant':
        if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
          const tool_calls = message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          }));
          // Without text, `content` is '' (as the AI SDK's OpenAI providers send it), not null or left out:
          // llama-cpp-python's request schema rejects null and its chat template needs the field (HTTP 500).
          return { role: 'assistant', content: message.content, tool_calls };
        }
        return { role: 'assistant', content: message.content };
      case 'tool':
        if (message.toolCallId === undefined) {
          throw new InvalidInputError(
            `Model message #${index} has role "tool" but no toolCallId (content ${JSON.stringify(message.content.slice(0, 80))}); set toolCallId to the id of the call it answers.`,
          );
        }
        return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
      default:
        throw new InvalidInputError(unknownRole(message, index));
    }
  });
}

/** The message for a model message whose role is none of Baton's five. */
export function unknownRole(message: ModelMessage, index: number): string {
  return `Model message #${index} has unknown role ${JSON.stringify(message.role)}; use system, user, assistant, tool or context.`;
}

/**
 * Baton tool definitions as Chat Completions function tools. `strict` is left off because schemas
 * made from zod need not meet strict mode's rules; Baton validates arguments itself.
 *
 * @example
 * ```ts
 * toChatTools([{ name: 'look_up_order', description: 'Finds an order.', parameters: { type: 'object' } }]);
 * // [{ type: 'function', function: { name: 'look_up_order', description: 'Finds an order.', parameters: { type: 'object' } } }]
 * ```
 */
export function toChatTools(tools: readonly ToolDefinition[]): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}
