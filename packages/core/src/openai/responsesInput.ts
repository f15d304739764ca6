import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { InvalidInputError } from '../errors.js';
import type { ModelMessage } from '../conversation/message.js';
import type { ToolDefinition } from '../models/modelClient.js';
import { unknownRole } from './chatMessages.js';
import { recalledContext } from '../models/recalledContext.js';

/** What {@link toResponsesInput} gives: `instructions` (when the messages start with system text) and `input` items. */
export interface ResponsesInput {
  instructions?: string;
  input: ResponseInputItem[];
}

/**
 * Baton model messages as a Responses API request (wire format:
 * https://platform.openai.com/docs/api-reference/responses/create): the leading `system` messages
 * become `instructions`, a later `system` message a `system` input message, `context` a `developer`
 * message prefixed as recalled context, `user`/`assistant` text easy input messages, an assistant's
 * tool calls `function_call` items, and `tool` results `function_call_output` items.
 *
 * @throws {InvalidInputError} when a `tool` message has no `toolCallId`, or a role is unknown
 * @example
 * ```ts
 * toResponsesInput([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
 * // { instructions: 'Be brief.', input: [{ type: 'message', role: 'user', content: 'Hi' }] }
 * ```
 */
export function toResponsesInput(messages: readonly ModelMessage[]): ResponsesInput {
  let start = 0;
  const instructions: string[] = [];
  while (messages[start]?.role === 'system') {
    instructions.push(messages[start]!.content);
    start += 1;
  }
  const input: ResponseInputItem[] = [];
  for (let index = start; index < messages.length; index += 1) {
    const message = messages[index]!;
    switch (message.role) {
      case 'system':
        input.push({ type: 'message', role: 'system', content: message.content });
        break;
      case 'context':
        input.push({ type: 'message', role: 'developer', content: recalledContext(message.content) });
        break;
      case 'user':
        input.push({ type: 'message', role: 'user', content: message.content });
        break;
      case 'assistant':
        if (message.content !== '' || message.toolCalls === undefined || message.toolCalls.length === 0) {
          input.push({ type: 'message', role: 'assistant', content: message.content });
        }
        for (const call of message.toolCalls ?? []) {
          input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
        }
        break;
      case 'tool':
        if (message.toolCallId === undefined) {
          throw new InvalidInputError(
            `Model message #${index} has role "tool" but no toolCallId (content ${JSON.stringify(message.content.slice(0, 80))}); set toolCallId to the id of the call it answers.`,
          );
        }
        input.push({ type: 'function_call_output', call_id: message.toolCallId, output: message.content });
        break;
      default:
        throw new InvalidInputError(unknownRole(message, index));
    }
  }
  return instructions.length > 0 ? { instructions: instructions.join('\n\n'), input } : { input };
}

/**
 * Baton tool definitions as Responses API function tools (`strict: false`: schemas made from zod
 * need not meet strict mode's rules; Baton validates arguments itself).
 *
 * @example
 * ```ts
 * toResponsesTools([{ name: 'look_up_order', description: 'Finds an order.', parameters: { type: 'object' } }]);
 * // [{ type: 'function', name: 'look_up_order', description: 'Finds an order.', parameters: { type: 'object' }, strict: false }]
 * ```
 */
export function toResponsesTools(tools: readonly ToolDefinition[]): FunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    strict: false,
  }));
}
