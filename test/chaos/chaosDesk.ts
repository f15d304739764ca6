/**
 * The chaos scenario's workflow: coordinator `triage` and specialists `billing` (parallel look-ups,
 * then a `refund` that needs approval) and `shipping` (asks the user for the address, then three
 * parallel tool calls), on a given store and checkpoint policy. Every model call and every tool's
 * start and end passes a kill point and is written to the side log.
 */
import { createHash } from 'node:crypto';
import { agent, type ModelClient, type Store, type Tool, tool } from '@baton/core';
import { type CheckpointOptions, HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import { z } from 'zod';
import { markersIn } from './conversationScript.js';
import { DeskModel } from './deskModel.js';
import type { KillSwitch } from './killSwitch.js';
import type { SideLog } from './sideLog.js';

/** What the desk reports to: the kill switch and the side log of the trial. */
export interface ChaosHooks {
  kill: KillSwitch;
  log: SideLog;
}

/**
 * Builds the chaos desk on `store` (already wrapped by `chaosStore` when kill points are wanted),
 * with a `historyWindow({ messages: window })` when `window` is given.
 *
 * @example
 * ```ts
 * const workflow = createChaosDesk(chaosStore(store, kill), { every: 'step', keep: 'latest' }, { kill, log });
 * ```
 */
export function createChaosDesk(
  store: Store,
  checkpoints: CheckpointOptions,
  hooks: ChaosHooks,
  window?: number,
): HandoffWorkflow {
  const model = watchedModel(new DeskModel(), hooks);
  const orderId = z.object({ orderId: z.string() });
  const billingTools = [
    tool({
      name: 'look_up_order',
      description: 'Finds an order.',
      parameters: orderId,
      execute: ({ orderId: id }) => `order ${id}: 2 items, 80 EUR`,
    }),
    tool({
      name: 'look_up_charges',
      description: 'Lists the charges of an order.',
      parameters: orderId,
      execute: ({ orderId: id }) => `order ${id} was charged 40 EUR twice`,
    }),
    tool({
      name: 'refund',
      description: 'Refunds an amount in EUR.',
      parameters: z.object({ orderId: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: ({ orderId: id, amount }) => `refunded ${amount} EUR on order ${id}`,
    }),
  ];
  const shippingTools = [
    tool({
      name: 'track_parcel',
      description: 'Tracks the parcel of an order.',
      parameters: orderId,
      execute: ({ orderId: id }) => `parcel of ${id} is in Leeds`,
    }),
    tool({
      name: 'check_address',
      description: 'Checks an address.',
      parameters: z.object({ address: z.string() }),
      execute: ({ address }) => `${address} is deliverable`,
    }),
    tool({
      name: 'estimate_delivery',
      description: 'Estimates delivery.',
      parameters: orderId,
      execute: ({ orderId: id }) => `${id} arrives in 2 days`,
    }),
  ];
  const triage = agent({
    name: 'triage',
    description: 'Greets and routes.',
    instructions: 'Route the customer.',
    model,
  });
  const billing = agent({
    name: 'billing',
    description: 'Charges and refunds.',
    instructions: 'Resolve billing.',
    model,
    tools: billingTools.map((t) => watchedTool(t, hooks)),
  });
  const shipping = agent({
    name: 'shipping',
    description: 'Parcels and delivery.',
    instructions: 'Resolve shipping.',
    model,
    tools: shippingTools.map((t) => watchedTool(t, hooks)),
  });
  const builder = new HandoffBuilder({ name: 'chaos-desk' })
    .participants(triage, billing, shipping)
    .coordinator(triage)
    .returnTo('coordinator')
    .store(store)
    .checkpoints(checkpoints);
  if (window !== undefined) builder.historyWindow({ messages: window });
  return builder.build();
}

/** A tool whose execution passes kill points and is logged at its start and end. */
function watchedTool(inner: Tool, { kill, log }: ChaosHooks): Tool {
  return {
    ...inner,
    execute: async (args, context) => {
      const entry = { toolCallId: context.toolCallId, agent: context.agent, tool: inner.name };
      await kill.point(`tool.${inner.name}:start`);
      log.append({ t: 'tool.start', ...entry });
      const result = await inner.execute(args, context);
      log.append({ t: 'tool.end', ...entry });
      await kill.point(`tool.${inner.name}:end`);
      return result;
    },
  };
}

/** A model whose every call passes a kill point and logs what its input holds (ids, markers, tool call ids). */
function watchedModel(inner: ModelClient, { kill, log }: ChaosHooks): ModelClient {
  return {
    model: inner.model,
    async *stream(request) {
      const agentName = request.agent ?? 'unknown';
      const input = request.messages.filter((m) => m.role !== 'system');
      log.append({
        t: 'model',
        agent: agentName,
        hash: createHash('sha256')
          .update(JSON.stringify(input.map(({ id: _id, ...rest }) => rest)))
          .digest('hex')
          .slice(0, 16),
        ids: input.flatMap((m) => (m.id === undefined ? [] : [m.id])),
        markers: input.flatMap((m) => markersIn(m.content)),
        toolCallIds: input.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)),
        resultIds: input.flatMap((m) => (m.role === 'tool' && m.toolCallId !== undefined ? [m.toolCallId] : [])),
      });
      await kill.point(`model.${agentName}`);
      yield* inner.stream(request);
    },
  };
}
