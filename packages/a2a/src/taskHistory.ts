import { type Message as A2AMessage, Part } from '@a2a-js/sdk';
import type { Message } from '@baton/core';
import { agentMessage, dataPart, textPart, userMessage } from './a2aMessages.js';

/** What an `input-required` task shows of the Baton request it waits on. */
export interface PendingRequestSummary {
  id: string;
  type: 'user_input' | 'tool_approval' | 'human_step';
  agent: string;
  prompt: string;
  toolName?: string;
  arguments?: string;
}

/**
 * One A2A message a client sent in a task, as the thread store records it: its `messageId`, its
 * parts as sent (the SDK's JSON form, `Part.toJSON`), its metadata, where it came in the session
 * (`afterSeq`: the session's last message when it arrived) and the request it answered, if any.
 * Answers to `input-required` are tool results in the session, not user messages, so this record
 * is what keeps them in the task's history.
 */
export interface TaskInput {
  messageId: string;
  parts: unknown[];
  metadata?: Record<string, unknown>;
  afterSeq: number;
  /** The request the task waited on when this message came (its answer, or an attempt at one). */
  request?: PendingRequestSummary;
}

/** A task's last status message when it is no message of the session (a refusal, a cancellation, a closing note). */
export interface TaskNote {
  messageId: string;
  parts: unknown[];
  metadata?: Record<string, unknown>;
}

/** What {@link taskHistory} rebuilds a task from: its record's inputs, pending request and note. */
export interface TaskHistorySource {
  taskId: string;
  contextId: string;
  /** The task's part of the session, in `seq` order. */
  messages: readonly Message[];
  inputs: readonly TaskInput[];
  /** The request the task waits on now (only for `input-required`). */
  waitingOn?: PendingRequestSummary;
  note?: TaskNote;
}

/**
 * A task's `history` as the SDK's `ResultManager` builds it while the task runs, rebuilt from the
 * session: the client's messages (as sent, from {@link TaskInput}; the session's user messages only
 * for tasks recorded before inputs were), each assistant message with text once (its Baton id as
 * `messageId`), each request the task asked (the `input-required` status message) before the
 * answer to it, the request it waits on last, and the note of its final status last.
 */
export function taskHistory(source: TaskHistorySource): A2AMessage[] {
  const fields = { contextId: source.contextId, taskId: source.taskId };
  const history: A2AMessage[] = [];
  const shown = new Set<string>();
  const inputs = [...source.inputs];
  const ask = (request: PendingRequestSummary | undefined) => {
    if (request === undefined || shown.has(request.id)) return;
    shown.add(request.id);
    history.push(requestMessage(request, fields));
  };
  const flushInputs = (beforeSeq: number) => {
    while (inputs.length > 0 && inputs[0]!.afterSeq < beforeSeq) {
      const input = inputs.shift()!;
      ask(input.request);
      history.push(storedMessage('user', input, fields));
      // A message that left its request waiting (the next message, or the task, still waits on it) was not an answer.
      const still = inputs.length > 0 ? inputs[0]!.request : source.waitingOn;
      if (input.request !== undefined && still?.id === input.request.id)
        history.push(askedAgain(input.request, fields, input.messageId));
    }
  };
  const recorded = source.inputs.length > 0;
  for (const m of source.messages) {
    if (m.content === '' || !(m.role === 'assistant' || (m.role === 'user' && !recorded))) continue;
    flushInputs(m.seq);
    history.push(
      m.role === 'user'
        ? userMessage(m.content, { ...fields, messageId: m.id })
        : agentMessage(m.content, { ...fields, messageId: m.id, metadata: { agent: m.agent } }),
    );
  }
  flushInputs(Number.POSITIVE_INFINITY);
  ask(source.waitingOn);
  const note = source.note;
  if (note !== undefined && !history.some((m) => m.messageId === note.messageId))
    history.push(storedMessage('agent', note, fields));
  return history;
}

/** The A2A message of a recorded input or note. */
function storedMessage(
  role: 'user' | 'agent',
  stored: TaskNote,
  fields: { contextId: string; taskId: string },
): A2AMessage {
  const parts = stored.parts.map((part) => Part.fromJSON(part));
  const rest = { ...fields, messageId: stored.messageId, metadata: stored.metadata ?? {} };
  return role === 'user' ? userMessage(parts, rest) : agentMessage(parts, rest);
}

/** A message's parts and metadata in the form the thread store keeps (JSON, as the SDK writes it). */
export function storedForm(sent: A2AMessage): {
  messageId: string;
  parts: unknown[];
  metadata?: Record<string, unknown>;
} {
  const parts = sent.parts.map((part) => Part.toJSON(part));
  const metadata = sent.metadata ?? {};
  return Object.keys(metadata).length === 0
    ? { messageId: sent.messageId, parts }
    : { messageId: sent.messageId, parts, metadata: structuredClone(metadata) };
}

/**
 * The agent message that answers a message which was no answer to the request: it says so, and
 * asks again (its own `messageId`, so a client's history holds it after the message it answers).
 */
export function askedAgain(
  request: PendingRequestSummary,
  fields: { contextId: string; taskId: string },
  inReplyTo: string,
): A2AMessage {
  const asked = requestMessage(request, fields);
  const expected = request.type === 'tool_approval' ? 'an approval' : 'an answer';
  return {
    ...asked,
    messageId: `${asked.messageId}:again:${inReplyTo}`,
    parts: [textPart(`Not understood as ${expected}:`), ...asked.parts],
  };
}

/** The agent message an `input-required` task shows: the request's prompt, and the request as data. */
export function requestMessage(
  request: PendingRequestSummary,
  fields: { contextId: string; taskId: string },
): A2AMessage {
  const text =
    request.type === 'tool_approval'
      ? `${request.agent} asks to approve ${request.toolName}(${request.arguments}). ` +
        'Answer "yes" or "no" (or data { "approved": true | false, "reason"? }).'
      : request.prompt;
  return agentMessage([textPart(text), dataPart({ batonRequest: request })], {
    ...fields,
    messageId: `${fields.taskId}:request:${request.id}`,
    metadata: { agent: request.agent },
  });
}
