import { type ModelMessage as BatonModelMessage, InvalidInputError, recalledContext } from '@baton/core';
import type { AssistantContent, ModelMessage, ToolCallPart } from 'ai';

/**
 * Baton model messages as AI SDK `ModelMessage`s (https://ai-sdk.dev/docs/reference/ai-sdk-core/model-message):
 * `system` → system, `context` → a system message prefixed as recalled context (`RECALLED_CONTEXT_PREFIX`),
 * `user` → user, `assistant` → assistant text and `tool-call` parts (arguments parsed from the
 * model's JSON text; `{}` when it was not valid JSON, which Baton answered with an error result),
 * `tool` → a tool message with one `tool-result` part (`output: { type: 'text' }`).
 *
 * @throws {InvalidInputError} when a `tool` message has no `toolCallId`, or a role is unknown
 * @example
 * ```ts
 * import { toAiSdkMessages } from '@baton/ai-sdk';
 * toAiSdkMessages([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
 * // [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]
 * ```
 */
export function toAiSdkMessages(messages: readonly BatonModelMessage[]): ModelMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((message, index): ModelMessage => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'context':
        return { role: 'system', content: recalledContext(message.content) };
      case 'user':
        return { role: 'user', content: message.content };
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: message.content };
        const content: Exclude<AssistantContent, string> =
          message.content === '' ? [] : [{ type: 'text', text: message.content }];
        for (const call of calls) {
          toolNames.set(call.id, call.name);
          const part: ToolCallPart = {
            type: 'tool-call',
            toolCallId: call.id,
            toolName: call.name,
            input: parseArguments(call.arguments),
          };
          content.push(part);
        }
        return { role: 'assistant', content };
      }
      case 'tool': {
        if (message.toolCallId === undefined) {
          throw new InvalidInputError(
            `Model message #${index} has role "tool" but no toolCallId (content ${JSON.stringify(message.content.slice(0, 80))}); set toolCallId to the id of the call it answers.`,
          );
        }
        const toolName = message.toolName ?? toolNames.get(message.toolCallId) ?? 'unknown_tool';
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: message.toolCallId,
              toolName,
              output: { type: 'text', value: message.content },
            },
          ],
        };
      }
      default:
        throw new InvalidInputError(
          `Model message #${index} has unknown role ${JSON.stringify(message.role)}; use system, user, assistant, tool or context.`,
        );
    }
  });
}

/** A tool call's JSON text as the object providers send back (`{}` for text that is not a JSON object). */
function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
