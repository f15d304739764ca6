import { z } from 'zod';
import { IsoTimestampSchema } from './timestamp.js';

/**
 * Where a paused turn stands in its branch: the first `throughSeq` messages of `branchId`.
 * A request holds this reference, never a copy of the messages (docs/architecture.md invariant 1).
 */
export const ConversationRefSchema = z.object({ branchId: z.string(), throughSeq: z.number().int().nonnegative() });
/** `{ branchId, throughSeq }`. */
export type ConversationRef = z.infer<typeof ConversationRefSchema>;

/**
 * A question to the outside that pauses a turn: `user_input` (an agent called
 * `request_user_input({ prompt })`) or `tool_approval` (a tool with `needsApproval` waits for a
 * human). `toolCallId` is the pending tool call the answer resolves.
 */
export const RequestSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('user_input'),
    id: z.string(),
    agent: z.string(),
    toolCallId: z.string(),
    prompt: z.string(),
    conversationRef: ConversationRefSchema,
    createdAt: IsoTimestampSchema,
  }),
  z.object({
    type: z.literal('tool_approval'),
    id: z.string(),
    agent: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    /** The arguments the model wrote, as JSON text. */
    arguments: z.string(),
    conversationRef: ConversationRefSchema,
    createdAt: IsoTimestampSchema,
  }),
]);
/** A pending `user_input` or `tool_approval` request. */
export type Request = z.infer<typeof RequestSchema>;

/** A request as an executor raises it; the runtime adds `id`, `conversationRef` and `createdAt`. */
export type NewRequest =
  | { type: 'user_input'; agent: string; toolCallId: string; prompt: string }
  | { type: 'tool_approval'; agent: string; toolCallId: string; toolName: string; arguments: string };

/** A human's answer to a `tool_approval` request. */
export type ApprovalDecision = { approved: true } | { approved: false; reason?: string };
