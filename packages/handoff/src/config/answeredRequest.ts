import type { Message, Request } from '@baton/core';
import type { RequestAnswer } from './handoffTypes.js';

/** The `metadata` key under which a tool result records the request it waited on. */
export const ANSWERED_REQUEST_KEY = 'answeredRequest';

/**
 * What a tool result that waited on a request records in its `metadata.answeredRequest`, so the
 * stored history still tells the request and its answer after the checkpoint that held the request
 * is pruned: `{ id, type, createdAt, approved?, reason?, always? }` (`approved`/`reason` for a
 * `tool_approval`, and `always: 'session'` when that approval granted the tool for the session; a
 * `user_input` answer is the result's content).
 */
export interface AnsweredRequest {
  id: string;
  type: 'user_input' | 'tool_approval';
  createdAt: string;
  approved?: boolean;
  reason?: string;
  always?: 'session';
}

/** The record of `request` answered with `answer` (`undefined` for a `human_step`, which its operator message records). */
export function answeredRequest(request: Request, answer: RequestAnswer): AnsweredRequest | undefined {
  if (request.type === 'human_step') return undefined;
  const record: AnsweredRequest = { id: request.id, type: request.type, createdAt: request.createdAt };
  if (request.type === 'tool_approval' && typeof answer === 'object' && answer !== null && 'approved' in answer) {
    record.approved = answer.approved;
    if (answer.approved === false && answer.reason !== undefined) record.reason = answer.reason;
    if (answer.approved === true && answer.always === 'session') record.always = 'session';
  }
  return record;
}

/** The `metadata.answeredRequest` of a stored tool result, if it has one. */
export function answeredRequestOf(message: Message): AnsweredRequest | undefined {
  const value = message.metadata?.[ANSWERED_REQUEST_KEY] as AnsweredRequest | undefined;
  return typeof value === 'object' && value !== null && typeof value.id === 'string' ? value : undefined;
}
