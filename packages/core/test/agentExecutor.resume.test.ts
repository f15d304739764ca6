import {
  AgentExecutor,
  type ApprovalDecision,
  agent,
  endConversationControl,
  handoffControl,
  type PendingWrite,
  type Tool,
  tool,
  userInputControl,
} from '@baton/core';
import { ScriptedModel, type ScriptedResponse } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runExecutor, TestJournal } from './support/testJournal.js';

function executorWith(script: ScriptedResponse[], tools: Tool[]) {
  const model = new ScriptedModel(script);
  return {
    model,
    executor: new AgentExecutor(
      agent({ name: 'billing', description: 'Billing.', instructions: 'You handle billing.', tools, model }),
    ),
  };
}

async function userSays(text: string): Promise<TestJournal> {
  const journal = new TestJournal();
  await journal.commit([{ role: 'user', content: text }]);
  return journal;
}

function refundTool(ran: string[]) {
  return tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: ({ orderId }) => {
      ran.push(orderId);
      return `Refunded ${orderId}.`;
    },
  });
}

const transferTool = tool({
  name: 'transfer',
  description: 'Hands off to another agent.',
  parameters: z.object({ to: z.string(), why: z.string().optional() }),
  execute: ({ to, why }) => handoffControl(to, why),
});

describe('AgentExecutor requests and resume', () => {
  it('pauses on a tool that needs approval, then runs it once approved', async () => {
    const ran: string[] = [];
    const { executor, model } = executorWith(
      [{ toolCalls: [{ id: 'call_refund', name: 'refund', arguments: { orderId: 'A-1' } }] }, { text: 'Refund done.' }],
      [refundTool(ran)],
    );
    const journal = await userSays('Refund A-1.');
    const first = await runExecutor(executor, journal);

    expect(first.outcome).toMatchObject({
      type: 'requests',
      requests: [
        {
          type: 'tool_approval',
          agent: 'billing',
          toolCallId: 'call_refund',
          toolName: 'refund',
          arguments: '{"orderId":"A-1"}',
        },
      ],
    });
    expect(ran).toEqual([]);
    expect(journal.messages.map((m) => m.role)).toEqual(['user', 'assistant']);

    const approvals = new Map<string, ApprovalDecision>([['call_refund', { approved: true }]]);
    const second = await runExecutor(executor, journal, { approvals });
    expect(ran).toEqual(['A-1']);
    expect(journal.messages.find((m) => m.role === 'tool')).toMatchObject({
      toolCallId: 'call_refund',
      content: 'Refunded A-1.',
      isError: false,
    });
    expect(second.outcome.type === 'reply' && second.outcome.message.content).toBe('Refund done.');
    expect(model.requests).toHaveLength(2);
  });

  it('answers a rejected approval with an error result carrying the reason, without running the tool', async () => {
    const ran: string[] = [];
    const { executor } = executorWith(
      [
        { toolCalls: [{ id: 'call_refund', name: 'refund', arguments: { orderId: 'A-1' } }] },
        { text: 'The refund was not approved.' },
      ],
      [refundTool(ran)],
    );
    const journal = await userSays('Refund A-1.');
    await runExecutor(executor, journal);
    const approvals = new Map<string, ApprovalDecision>([
      ['call_refund', { approved: false, reason: 'over the refund limit' }],
    ]);
    const { outcome } = await runExecutor(executor, journal, { approvals });
    expect(ran).toEqual([]);
    expect(journal.messages.find((m) => m.role === 'tool')).toMatchObject({
      isError: true,
      content: 'Error: a human rejected this call to refund: over the refund limit',
    });
    expect(outcome.type === 'reply' && outcome.message.content).toBe('The refund was not approved.');
  });

  it('keeps a sibling result as a pending write while another call waits for approval, and does not re-run it on resume', async () => {
    const ran: string[] = [];
    const lookups: string[] = [];
    const lookUp = tool({
      name: 'look_up_order',
      description: 'Finds an order.',
      parameters: z.object({ orderId: z.string() }),
      execute: ({ orderId }) => {
        lookups.push(orderId);
        return `Order ${orderId} found.`;
      },
    });
    const { executor } = executorWith(
      [
        {
          toolCalls: [
            { id: 'call_look', name: 'look_up_order', arguments: { orderId: 'A-1' } },
            { id: 'call_refund', name: 'refund', arguments: { orderId: 'A-1' } },
          ],
        },
        { text: 'Done.' },
      ],
      [lookUp, refundTool(ran)],
    );
    const journal = await userSays('Check and refund A-1.');
    const first = await runExecutor(executor, journal);
    expect(first.outcome.type).toBe('requests');
    expect(journal.recorded.map((w) => w.toolCallId)).toEqual(['call_look']);

    const resumed = new TestJournal(journal.recorded);
    await resumed.commit(journal.messages);
    const second = await runExecutor(executor, resumed, { approvals: new Map([['call_refund', { approved: true }]]) });
    expect(lookups).toEqual(['A-1']);
    expect(ran).toEqual(['A-1']);
    expect(
      second.events.filter((e) => e.type === 'tool.call').map((e) => e.type === 'tool.call' && e.toolCall.id),
    ).toEqual(['call_refund']);
    expect(resumed.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content])).toEqual([
      ['call_look', 'Order A-1 found.'],
      ['call_refund', 'Refunded A-1.'],
    ]);
  });

  it('resumes an interrupted step from journal.pendingWrites without re-running finished calls', async () => {
    const ran: string[] = [];
    const lookUp = tool({
      name: 'look_up_order',
      description: 'Finds an order.',
      parameters: z.object({ orderId: z.string() }),
      execute: ({ orderId }) => {
        ran.push(orderId);
        return `Order ${orderId} found.`;
      },
    });
    const finished: PendingWrite = {
      toolCallId: 'call_1',
      toolName: 'look_up_order',
      agent: 'billing',
      content: 'Order A-1 found (before the crash).',
      isError: false,
      durationMs: 3,
      createdAt: '2025-01-01T00:00:00.000Z',
    };
    const journal = new TestJournal([finished]);
    await journal.commit([
      { role: 'user', content: 'A-1 and B-2?' },
      {
        role: 'assistant',
        agent: 'billing',
        content: '',
        toolCalls: [
          { id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' },
          { id: 'call_2', name: 'look_up_order', arguments: '{"orderId":"B-2"}' },
        ],
      },
    ]);
    const { executor, model } = executorWith([{ text: 'Both found.' }], [lookUp]);
    const { outcome } = await runExecutor(executor, journal);

    expect(ran).toEqual(['B-2']);
    expect(journal.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content])).toEqual([
      ['call_1', 'Order A-1 found (before the crash).'],
      ['call_2', 'Order B-2 found.'],
    ]);
    expect(model.requests).toHaveLength(1);
    expect(outcome.type === 'reply' && outcome.message.content).toBe('Both found.');
  });

  it('pauses on userInputControl with a user_input request, and commits the answer given as a pending write on resume', async () => {
    const ask = tool({
      name: 'ask_user',
      description: 'Asks the user.',
      parameters: z.object({ prompt: z.string() }),
      execute: ({ prompt }) => userInputControl(prompt),
    });
    const { executor, model } = executorWith(
      [
        { toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { prompt: 'Which account?' } }] },
        { text: 'Thanks, AC-99 it is.' },
      ],
      [ask],
    );
    const journal = await userSays('I was charged twice.');
    const first = await runExecutor(executor, journal);
    expect(first.outcome).toMatchObject({
      type: 'requests',
      requests: [{ type: 'user_input', agent: 'billing', toolCallId: 'call_ask', prompt: 'Which account?' }],
    });
    expect(journal.messages.map((m) => m.role)).toEqual(['user', 'assistant']);

    const answer: PendingWrite = {
      toolCallId: 'call_ask',
      toolName: 'ask_user',
      agent: 'billing',
      content: 'AC-99',
      isError: false,
      durationMs: 0,
      createdAt: new Date().toISOString(),
    };
    const resumed = new TestJournal([answer]);
    await resumed.commit(journal.messages);
    const second = await runExecutor(executor, resumed);
    expect(resumed.messages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: 'call_ask', content: 'AC-99' });
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', content: 'AC-99' });
    expect(second.outcome.type === 'reply' && second.outcome.message.content).toBe('Thanks, AC-99 it is.');
  });

  it('returns a handoff outcome and records the handoff call result, without another model call', async () => {
    const { executor, model } = executorWith(
      [{ toolCalls: [{ id: 'call_h', name: 'transfer', arguments: { to: 'shipping', why: 'parcel lost' } }] }],
      [transferTool],
    );
    const journal = await userSays('My parcel is lost.');
    const { outcome } = await runExecutor(executor, journal);
    expect(outcome).toMatchObject({ type: 'handoff', target: 'shipping', reason: 'parcel lost' });
    expect(journal.messages.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 'call_h',
      content: 'Transferred to shipping.',
      isError: false,
    });
    expect(model.requests).toHaveLength(1);
  });

  it('lets only the first of two handoffs in one response move control; the second gets an error result', async () => {
    const { executor } = executorWith(
      [
        {
          toolCalls: [
            { id: 'call_a', name: 'transfer', arguments: { to: 'shipping' } },
            { id: 'call_b', name: 'transfer', arguments: { to: 'returns' } },
          ],
        },
      ],
      [transferTool],
    );
    const journal = await userSays('Lost parcel, want to return it.');
    const { outcome } = await runExecutor(executor, journal);
    expect(outcome).toMatchObject({ type: 'handoff', target: 'shipping' });
    expect(outcome).not.toHaveProperty('reason');
    const results = journal.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['call_a', false],
      ['call_b', true],
    ]);
    expect(results[1]?.content).toBe(
      'Ignored: this response already moved control (handoff to shipping). Make one handoff at a time.',
    );
  });

  it('returns end_conversation when a tool ends the conversation', async () => {
    const end = tool({
      name: 'end_chat',
      description: 'Ends.',
      parameters: z.object({}),
      execute: () => endConversationControl('resolved'),
    });
    const { executor } = executorWith([{ toolCalls: [{ id: 'call_end', name: 'end_chat' }] }], [end]);
    const journal = await userSays('Thanks, bye.');
    const { outcome } = await runExecutor(executor, journal);
    expect(outcome).toMatchObject({ type: 'end_conversation', reason: 'resolved' });
    expect(journal.messages.at(-1)).toMatchObject({ role: 'tool', content: 'The conversation is closed.' });
  });
});
