import { agent, type ModelClient, type ModelRequest, type ModelStreamEvent, type Store, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import { z } from 'zod';

/** A model that waits for `gate()` before each streamed event of `inner`: lets a test hold a turn mid-stream. */
export class PacedModel implements ModelClient {
  readonly model: string;
  constructor(
    readonly inner: ModelClient,
    readonly gate: () => Promise<void>,
  ) {
    this.model = inner.model;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    for await (const event of this.inner.stream(request)) {
      await this.gate();
      yield event;
    }
  }
}

/** Polls `condition` every 5 ms until it holds. @throws {Error} after `timeoutMs` */
export async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A gate that lets through as many waiters as it has permits: `allow(n)` adds n, `open()` lets everything through, `close()` stops it again. */
export function createGate() {
  const waiting: (() => void)[] = [];
  let permits = Number.POSITIVE_INFINITY;
  const release = () => {
    while (permits > 0 && waiting.length > 0) {
      permits--;
      waiting.shift()!();
    }
  };
  return {
    wait: () =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        release();
      }),
    allow(n: number) {
      permits += n;
      release();
    },
    open() {
      permits = Number.POSITIVE_INFINITY;
      release();
    },
    close() {
      permits = 0;
    },
    /** How many are waiting. */
    get waiting() {
      return waiting.length;
    },
  };
}

/**
 * The support desk the server tests run: triage hands every customer message to billing; billing
 * asks for the order number (`request_user_input`), then calls `refund` (needs a supervisor's
 * approval), then answers. `refunds` records each refund that ran.
 */
export function serverDesk(
  store: Store,
  options: { gate?: () => Promise<void> } = {},
): { workflow: HandoffWorkflow; refunds: string[] } {
  const refunds: string[] = [];
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: ({ orderId, amount }) => {
      refunds.push(`${orderId}:${amount}`);
      return `Refunded ${amount} EUR for order ${orderId}.`;
    },
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route.',
    model: new ScriptedModel((request) =>
      request.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'a refund' } }] }
        : { text: 'How else can I help?' },
    ),
  });
  const billingModel = new ScriptedModel(
    (request) => {
      const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
      const sinceUser = request.messages.slice(lastUser + 1);
      const answered = sinceUser.find((m) => m.role === 'tool' && m.toolName === 'request_user_input');
      const refunded = sinceUser.find((m) => m.role === 'tool' && m.toolName === 'refund');
      if (refunded !== undefined)
        return { text: `All done. ${refunded.content} Anything else I can do for you today?` };
      if (answered !== undefined)
        return {
          text: 'Let me refund that.',
          toolCalls: [{ name: 'refund', arguments: { orderId: answered.content.trim(), amount: 40 } }],
        };
      return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'What is your order number?' } }] };
    },
    { chunkSize: 8 },
  );
  const billing = agent({
    name: 'billing',
    description: 'Refunds and charges.',
    instructions: 'Refund.',
    tools: [refund],
    model: options.gate === undefined ? billingModel : new PacedModel(billingModel, options.gate),
  });
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .build();
  return { workflow, refunds };
}
