import { appendFileSync } from 'node:fs';
import { agent, type ContextProvider, type Store, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { z } from 'zod';

/** How a desk's tools behave in this process. */
export interface DeskOptions {
  /** Who runs the tools (written to `logFile` as `<tool>:<who>` when one finishes). */
  who: string;
  /** A file each finished tool appends a line to (how a test sees which process ran what). */
  logFile?: string;
  /** `look_up_order` never finishes in this process (a worker that will be killed mid-turn). */
  hang?: boolean;
  /** Called when `look_up_order` starts (the test's sign that the turn is mid-tool). */
  onLookUp?: () => void;
  /** `look_up_order` waits for it after starting (a slow tool the test lets finish). */
  gate?: () => Promise<void>;
  memory?: ContextProvider;
}

/**
 * The test desk: `triage` hands every message off to `billing`; billing looks up an order
 * (`look_up_order`) or refunds one (`refund`, which needs approval) and then answers. The model
 * answers from what it is sent, so any process (any worker) continues a turn the same way.
 */
export function temporalDesk(store: Store, options: DeskOptions) {
  const log = (line: string) => {
    if (options.logFile !== undefined) appendFileSync(options.logFile, `${line}\n`);
  };
  const model = new ScriptedModel((request) => {
    const last = request.messages.at(-1);
    const lastUser = request.messages.findLast((m) => m.role === 'user')?.content ?? '';
    if (request.agent === 'triage')
      return { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'billing question' } }] };
    if (last?.role === 'tool' && (last.toolName === 'look_up_order' || last.toolName === 'refund'))
      return { text: `Done: ${last.content}` };
    const order = /\d+/.exec(lastUser)?.[0] ?? '0';
    return {
      toolCalls: [{ name: /refund/i.test(lastUser) ? 'refund' : 'look_up_order', arguments: { orderId: order } }],
    };
  });
  const lookUp = tool({
    name: 'look_up_order',
    description: 'Looks up an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      options.onLookUp?.();
      await options.gate?.();
      if (options.hang === true) await new Promise((resolve) => setTimeout(resolve, 600_000));
      log(`look_up_order:${options.who}`);
      return `order ${orderId} ships tomorrow`;
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => {
      log(`refund:${options.who}`);
      return `refunded order ${orderId}`;
    },
  });
  const triage = agent({ name: 'triage', description: 'Routes the customer.', instructions: 'Route.', model });
  const billing = agent({
    name: 'billing',
    description: 'Orders and refunds.',
    instructions: 'Help.',
    model,
    tools: [lookUp, refund],
  });
  let builder = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).coordinator(triage).store(store);
  if (options.memory !== undefined) builder = builder.memory(options.memory);
  return builder.build();
}
