/**
 * A task whose turn closes the conversation (an agent's `end_conversation`): its reply is what the
 * closing agent said, and when it said nothing the task says so, never an empty message.
 */
import { type Message as A2AMessage, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { textOf, userMessage } from '@baton/a2a';
import { agent, endConversationControl, InMemoryStore, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ServedA2A, serveA2A } from './support/serveA2A.js';

let served: ServedA2A | undefined;
afterEach(() => served?.close());

const send = (message: A2AMessage) => ({ tenant: '', message, configuration: undefined, metadata: undefined });
const asTask = (result: Task | A2AMessage): Task => {
  if (!('status' in result)) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
};

/** A desk whose one agent closes the conversation on "bye", saying `farewell` (or nothing) as it does. */
function closingDesk(farewell: string | undefined) {
  const endConversation = tool({
    name: 'end_conversation',
    description: 'Closes the resolved conversation.',
    parameters: z.object({ reason: z.string() }),
    execute: async ({ reason }) => endConversationControl(reason),
  });
  const model = new ScriptedModel((request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'user' && /bye/i.test(last.content)) {
      const close = { toolCalls: [{ name: 'end_conversation', arguments: { reason: 'case 7: resolved' } }] };
      return farewell === undefined ? close : { ...close, text: farewell };
    }
    return { text: 'Anything else?' };
  });
  const helper = agent({
    name: 'helper',
    description: 'Helps.',
    instructions: 'Help.',
    model,
    tools: [endConversation],
  });
  return new HandoffBuilder({ name: 'desk' }).participants(helper).store(new InMemoryStore()).build();
}

async function closeOver(farewell: string | undefined) {
  served = await serveA2A(closingDesk(farewell));
  const client = await new ClientFactory().createFromUrl(served.url);
  const first = asTask(await client.sendMessage(send(userMessage('hello'))));
  const closed = asTask(await client.sendMessage(send(userMessage('bye', { contextId: first.contextId }))));
  return { closed, read: await client.getTask({ tenant: '', id: closed.id }) };
}

describe('A2A: a turn that closes the conversation', () => {
  it("completes the task with the closing agent's own words", async () => {
    const { closed, read } = await closeOver('Glad I could help. Goodbye!');
    expect(closed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(closed.status?.message?.parts)).toBe('Glad I could help. Goodbye!');
    expect(textOf(closed.artifacts[0]?.parts)).toBe('Glad I could help. Goodbye!');
    expect(textOf(read.status?.message?.parts)).toBe('Glad I could help. Goodbye!');
    expect(read.history.map((m) => textOf(m.parts))).toEqual(['bye', 'Glad I could help. Goodbye!']);
  });

  it('says the conversation was closed, and why, when the closing agent said nothing', async () => {
    const { closed, read } = await closeOver(undefined);
    expect(closed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const note = 'The conversation was closed without a reply (case 7: resolved).';
    expect(textOf(closed.status?.message?.parts)).toBe(note);
    expect(closed.artifacts).toEqual([]);
    // Read back, the note is the status message and the last history entry, once.
    expect(textOf(read.status?.message?.parts)).toBe(note);
    expect(read.history.map((m) => textOf(m.parts))).toEqual(['bye', note]);
    expect(read.history.at(-1)?.messageId).toBe(read.status?.message?.messageId);
  });
});
