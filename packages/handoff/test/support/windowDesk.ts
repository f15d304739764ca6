import { appendFileSync } from 'node:fs';
import {
  AgentExecutor,
  agent,
  type ContextProvider,
  type Executor,
  type Message,
  type ModelMessage,
  type Store,
  tool,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { z } from 'zod';
import { HandoffBuilder, type HandoffSession } from '../../src/index.js';

/** Options of {@link windowDesk}. */
export interface WindowDeskOptions {
  /** `historyWindow({ messages })`; none: the whole history. */
  window?: number;
  /** `handoffHistory(mode)` (default `'omit'`). */
  handoffHistory?: 'omit' | 'keep';
  /** A file each refund appends `start:<order>:<who>` and `done:<order>:<who>` to. */
  log?: string;
  /** Who runs the desk (written to the log). */
  who?: string;
  /** The order whose refund never finishes (a process to kill mid-tool). */
  blockOrder?: string;
  /** Context providers (e.g. one that keeps what `onSessionClose` saw). */
  providers?: ContextProvider[];
  /** Called with `messages` of every termination check (the session goes on). */
  terminateWhen?: (messages: readonly Message[]) => void;
}

/** The order number of the newest user message a model input holds ("refund order 7" → "7"). */
function orderOf(messages: readonly ModelMessage[]): string {
  return /order (\d+)/.exec(messages.findLast((m) => m.role === 'user')?.content ?? '')?.[1] ?? '?';
}

/**
 * The history-window scenario: triage hands each "refund order N" to billing (handoff call id
 * `h-N`), billing calls `refund` (id `r-N`, needs approval, so the turn pauses) and answers
 * "Refunded order N." once it ran. Tool call ids follow the order, so two runs of the same script
 * send models the same inputs (message ids aside).
 */
export function windowDesk(store: Store, options: WindowDeskOptions = {}) {
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => {
      if (options.log !== undefined) appendFileSync(options.log, `start:${orderId}:${options.who ?? 'test'}\n`);
      if (orderId === options.blockOrder) await new Promise((resolve) => setTimeout(resolve, 600_000));
      if (options.log !== undefined) appendFileSync(options.log, `done:${orderId}:${options.who ?? 'test'}\n`);
      return `refunded ${orderId}`;
    },
  });
  const triageModel = new ScriptedModel((request) =>
    request.messages.at(-1)?.role === 'user'
      ? {
          toolCalls: [
            { id: `h-${orderOf(request.messages)}`, name: 'handoff_to_billing', arguments: { reason: 'refund' } },
          ],
        }
      : { text: 'Anything else?' },
  );
  const billingModel = new ScriptedModel((request) => {
    const last = request.messages.at(-1);
    const order = orderOf(request.messages);
    return last?.role === 'tool' && last.toolName === 'refund'
      ? { text: `Refunded order ${order}.` }
      : { toolCalls: [{ id: `r-${order}`, name: 'refund', arguments: { orderId: order } }] };
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route the customer.',
    model: triageModel,
  });
  const billingAgent = new AgentExecutor(
    agent({
      name: 'billing',
      description: 'Refunds.',
      instructions: 'Refund orders.',
      tools: [refund],
      model: billingModel,
    }),
  );
  // What billing's executor is given at the start of each activation (ExecutorInput.history), oldest first.
  const billingHistories: Message[][] = [];
  const billing: Executor = {
    name: billingAgent.name,
    description: billingAgent.description,
    validateApprovedArguments: (name, args) => billingAgent.validateApprovedArguments(name, args),
    execute: (input) => {
      billingHistories.push([...input.history]);
      return billingAgent.execute(input);
    },
  };
  const builder = new HandoffBuilder({ name: 'window' }).participants(triage, billing).coordinator(triage).store(store);
  if (options.window !== undefined) builder.historyWindow({ messages: options.window });
  if (options.handoffHistory !== undefined) builder.handoffHistory(options.handoffHistory);
  if (options.providers !== undefined) builder.contextProviders(...options.providers);
  const terminate = options.terminateWhen;
  if (terminate !== undefined)
    builder.terminateWhen(({ messages }) => {
      terminate(messages);
      return false;
    });
  return { workflow: builder.build(), triageModel, billingModel, billingHistories };
}

/** One turn of the script: "refund order N", then approve the refund; `open` gives the session for each of the two calls (the same object, or a fresh process's). */
export async function refundTurn(open: () => Promise<HandoffSession>, order: number): Promise<void> {
  for await (const _ of (await open()).send(`refund order ${order}`)) {
    // drain
  }
  const session = await open();
  const [request] = session.pendingRequests;
  if (request === undefined) throw new Error(`turn ${order} did not pause on the refund approval`);
  for await (const _ of session.respond(request.id, { approved: true })) {
    // drain
  }
}
