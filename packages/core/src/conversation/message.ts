import { z } from 'zod';
import { IsoTimestampSchema } from '../timestamp.js';
import { ASSETS_METADATA_KEY, assetRefsOf, describeAssets } from './asset.js';

/**
 * Who wrote a message: `system`, `user`, `assistant`, `tool` (a tool result), or `context`
 * (recalled memory injected before a turn).
 */
export const MessageRoleSchema = z.enum(['system', 'user', 'assistant', 'tool', 'context']);
/** One of `system | user | assistant | tool | context`. */
export type MessageRole = z.infer<typeof MessageRoleSchema>;

/**
 * A tool call an assistant message asked for. `arguments` is the raw JSON text the model wrote
 * (it may be malformed; the agent loop answers malformed arguments with a tool error result).
 */
export const ToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
/** `{ id, name, arguments }`, `arguments` being the model's raw JSON text. */
export type ToolCall = z.infer<typeof ToolCallSchema>;

/**
 * A stored message (docs/architecture.md vocabulary). `seq` is its position in its branch, from 1; the store
 * keeps each `(sessionId, branchId, seq)` once. Tool results carry `toolCallId`, `toolName` and
 * `isError`. `createdAt` is an ISO-8601 UTC timestamp.
 */
export const MessageSchema = z.object({
  id: z.string().min(1),
  seq: z.number().int().positive(),
  role: MessageRoleSchema,
  content: z.string(),
  agent: z.string().optional(),
  toolCalls: z.array(ToolCallSchema).optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  isError: z.boolean().optional(),
  /** How long the tool call took, in milliseconds (tool results only). */
  durationMs: z.number().nonnegative().optional(),
  createdAt: IsoTimestampSchema,
  metadata: z.record(z.string(), z.unknown()).optional(),
});
/** A stored message: `{ id, seq, role, content, agent?, toolCalls?, toolCallId?, toolName?, isError?, durationMs?, createdAt, metadata? }`. */
export type Message = z.infer<typeof MessageSchema>;

/** A message before the store has placed it: `id`, `seq` and `createdAt` are assigned on commit. */
export type NewMessage = Omit<Message, 'id' | 'seq' | 'createdAt'> & { id?: string; createdAt?: string };

/**
 * What a model sees of a message: no ids, no sequence numbers. The agent loop builds these from
 * stored messages plus the agent's instructions.
 */
export interface ModelMessage {
  role: MessageRole;
  content: string;
  /** The agent that wrote an assistant message (clients may ignore it). */
  agent?: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
  /** The stored message's id, when there is one, so tests can see which stored message went where. */
  id?: string;
}

/**
 * The model's view of a stored message. A message that refers to assets (`metadata.assets`, see
 * `AssetRef`) gets one line per asset after its text, naming the asset id a tool can read it by.
 *
 * @param message a stored message
 * @returns `{ role, content, agent?, toolCalls?, toolCallId?, toolName?, id }`
 */
export function toModelMessage(message: Message): ModelMessage {
  const out: ModelMessage = { role: message.role, content: message.content, id: message.id };
  if (message.metadata?.[ASSETS_METADATA_KEY] !== undefined) {
    const note = describeAssets(assetRefsOf(message));
    if (note !== '') out.content = out.content === '' ? note : `${out.content}\n\n${note}`;
  }
  if (message.agent !== undefined) out.agent = message.agent;
  if (message.toolCalls !== undefined) out.toolCalls = message.toolCalls;
  if (message.toolCallId !== undefined) out.toolCallId = message.toolCallId;
  if (message.toolName !== undefined) out.toolName = message.toolName;
  return out;
}
