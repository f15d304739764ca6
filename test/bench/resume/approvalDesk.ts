/**
 * The workflow of the resume bench: triage hands each customer message to billing, billing calls
 * `refund` (a tool that needs a human's approval, so the turn pauses), and once it is approved
 * billing answers. Instant ScriptedModels: the time measured is Baton's and the store's.
 */
import { agent, type Store, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import { WorkingMemory } from '@baton/memory';
import { z } from 'zod';

/** Options of {@link approvalDesk}. */
export interface ApprovalDeskOptions {
  /** Checkpoint after every step (`'step'`) or every turn (`'turn'`, default), and keep all of them (`keepAll`). */
  checkpoints?: { every: 'step' | 'turn'; keepAll?: boolean };
  /** The model input's window in messages (`historyWindow`); none: the whole history. */
  historyWindow?: number;
  /** Working memory's token budget (`WorkingMemory({ maxTokens })`); none: no working memory. */
  workingMemoryTokens?: number;
}

/** Builds the approval desk on `store`. */
export function approvalDesk(store: Store, options: ApprovalDeskOptions = {}): HandoffWorkflow {
  const refund = tool({
    name: 'refund',
    description: 'Refunds a charge.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => `refunded ${orderId}`,
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers to specialists.',
    instructions: 'Route the customer.',
    model: new ScriptedModel(
      (request) =>
        request.messages.at(-1)?.role === 'user'
          ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'refund' } }] }
          : { text: 'Anything else?' },
      { record: false },
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds, charges, invoices.',
    instructions: 'Resolve billing questions.',
    tools: [refund],
    model: new ScriptedModel(
      (request) =>
        request.messages.at(-1)?.role === 'tool' && request.messages.at(-1)?.toolName === 'refund'
          ? { text: 'Refunded.' }
          : { toolCalls: [{ name: 'refund', arguments: { orderId: '1234' } }] },
      { record: false },
    ),
  });
  const builder = new HandoffBuilder({ name: 'resume' }).participants(triage, billing).coordinator(triage).store(store);
  if (options.historyWindow !== undefined) builder.historyWindow({ messages: options.historyWindow });
  if (options.workingMemoryTokens !== undefined)
    builder.memory(new WorkingMemory({ maxTokens: options.workingMemoryTokens }));
  if (options.checkpoints !== undefined)
    builder.checkpoints({
      every: options.checkpoints.every,
      ...(options.checkpoints.keepAll ? { keep: { last: 1_000_000 } } : {}),
    });
  return builder.build();
}
