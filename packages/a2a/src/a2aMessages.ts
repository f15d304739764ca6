import { randomUUID } from 'node:crypto';
import { type Message as A2AMessage, type Part, Role } from '@a2a-js/sdk';

/** Fields a new A2A message may carry beyond its parts. */
export interface A2AMessageFields {
  contextId?: string;
  taskId?: string;
  messageId?: string;
  metadata?: Record<string, unknown>;
}

/**
 * A text part (`text/plain`).
 * @example
 * ```ts
 * import { textPart } from '@baton/a2a';
 * textPart('yes'); // { content: { $case: 'text', value: 'yes' }, mediaType: 'text/plain', … }
 * ```
 */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} };
}

/**
 * A structured data part (`application/json`), e.g. an approval answer `{ approved: true }`.
 * @example
 * ```ts
 * import { dataPart } from '@baton/a2a';
 * dataPart({ approved: false, reason: 'Too much.' });
 * ```
 */
export function dataPart(data: Record<string, unknown>): Part {
  return { content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: {} };
}

/**
 * An A2A message from the user (role `ROLE_USER`) with a fresh `messageId`, for the SDK's client.
 * @param parts text (one text part) or parts
 * @param fields `contextId` to continue a conversation, `taskId` to answer a task in `input-required`
 * @example
 * ```ts
 * import { userMessage } from '@baton/a2a';
 * const message = userMessage('yes', { contextId, taskId });
 * await client.sendMessage({ message, tenant: '', configuration: undefined, metadata: undefined });
 * ```
 */
export function userMessage(parts: string | readonly Part[], fields: A2AMessageFields = {}): A2AMessage {
  return message(Role.ROLE_USER, parts, fields);
}

/**
 * An A2A message from the agent (role `ROLE_AGENT`) with a fresh `messageId` unless one is given.
 * @example
 * ```ts
 * import { agentMessage } from '@baton/a2a';
 * agentMessage('Refunded 40 EUR.', { contextId, taskId, metadata: { agent: 'billing' } });
 * ```
 */
export function agentMessage(parts: string | readonly Part[], fields: A2AMessageFields = {}): A2AMessage {
  return message(Role.ROLE_AGENT, parts, fields);
}

function message(role: Role, parts: string | readonly Part[], fields: A2AMessageFields): A2AMessage {
  return {
    messageId: fields.messageId ?? randomUUID(),
    contextId: fields.contextId ?? '',
    taskId: fields.taskId ?? '',
    role,
    parts: typeof parts === 'string' ? [textPart(parts)] : [...parts],
    metadata: fields.metadata ?? {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The text of a message's (or artifact's) text parts, joined by newlines; `''` when it has none.
 * @example
 * ```ts
 * import { textOf, userMessage } from '@baton/a2a';
 * textOf(userMessage('hello').parts); // 'hello'
 * ```
 */
export function textOf(parts: readonly Part[] | undefined): string {
  return (parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join('\n');
}

/**
 * The first data part's object, if a message has one (`undefined` for none, or for a non-object value).
 * @example
 * ```ts
 * import { dataOf, dataPart } from '@baton/a2a';
 * dataOf([dataPart({ approved: true })]); // { approved: true }
 * ```
 */
export function dataOf(parts: readonly Part[] | undefined): Record<string, unknown> | undefined {
  for (const part of parts ?? []) {
    const value = part.content?.$case === 'data' ? part.content.value : undefined;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  }
  return undefined;
}
