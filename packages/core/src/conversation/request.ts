import { z } from 'zod';
import { IsoTimestampSchema } from '../timestamp.js';

/**
 * Where a paused turn stands in its branch: the first `throughSeq` messages of `branchId`.
 * A request holds this reference, never a copy of the messages (docs/architecture.md invariant 1).
 */
export const ConversationRefSchema = z.object({ branchId: z.string(), throughSeq: z.number().int().nonnegative() });
/** `{ branchId, throughSeq }`. */
export type ConversationRef = z.infer<typeof ConversationRefSchema>;

/**
 * A question to the outside that pauses a turn: `user_input` (an agent called
 * `request_user_input({ prompt })`), `tool_approval` (a tool with `needsApproval` waits for a
 * human), or `human_step` (a participant's whole step is a human's: a `HumanExecutor` put it on an
 * operator's queue). For the first two, `toolCallId` is the pending tool call the answer resolves;
 * a `human_step` belongs to no tool call: its `stepId` names the step (the operator queue's task
 * id), and its answer is committed as that participant's assistant message (or hands off).
 * `human_step` was added after the first checkpoints were written; checkpoints without it load as before.
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
  z.object({
    type: z.literal('human_step'),
    id: z.string(),
    agent: z.string(),
    /** The step's id: the same as the operator queue's task id. */
    stepId: z.string(),
    /** What the operator is asked to do. */
    prompt: z.string(),
    conversationRef: ConversationRefSchema,
    createdAt: IsoTimestampSchema,
  }),
]);
/** A pending `user_input`, `tool_approval` or `human_step` request. */
export type Request = z.infer<typeof RequestSchema>;

/** A request as an executor raises it; the runtime adds `id`, `conversationRef` and `createdAt`. */
export type NewRequest =
  | { type: 'user_input'; agent: string; toolCallId: string; prompt: string }
  | { type: 'tool_approval'; agent: string; toolCallId: string; toolName: string; arguments: string }
  | { type: 'human_step'; agent: string; stepId: string; prompt: string };

/**
 * What a request waits on, unique among a turn's pending requests: its tool call id, or the step id
 * of a `human_step`.
 * @example
 * ```ts
 * import { requestKey } from '@baton/core';
 * requestKey({ type: 'human_step', agent: 'operator', stepId: 's-1', prompt: 'Answer the customer' }); // 's-1'
 * ```
 */
export function requestKey(request: NewRequest | Request): string {
  return request.type === 'human_step' ? request.stepId : request.toolCallId;
}

/**
 * A human operator's answer to a `human_step` request: the participant's reply to the user (text, or
 * `{ reply }`), or a handoff to another participant (`{ handoff, reason? }`).
 */
export type HumanStepAnswer = string | { reply: string } | { handoff: string; reason?: string };

/**
 * A human's answer to a `tool_approval` request: approved (optionally with edited `arguments`, which
 * the tool then runs with, validated against its schema), or rejected with an optional reason.
 */
export type ApprovalDecision =
  | { approved: true; arguments?: Record<string, unknown> }
  | { approved: false; reason?: string };
