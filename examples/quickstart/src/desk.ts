/**
 * The quickstart's desk: a triage coordinator hands customers off to a billing and a shipping
 * specialist; billing's refund waits for a human's approval; episodic memory writes an episode
 * when a session closes and recalls it in the same user's next session.
 */
import { agent, type ModelClient, type ModelMessage, type ModelRequest, type Store, tool } from '@baton/core';
import { ScriptedModel, type ScriptedResponse } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import { EpisodicMemory } from '@baton/memory';
import { z } from 'zod';

const refundOrder = tool({
  name: 'refund_order',
  description: 'Refunds the duplicate charge of an order.',
  parameters: z.object({ orderId: z.string() }),
  needsApproval: true, // the turn pauses with a tool_approval request until a human answers it
  execute: async ({ orderId }) => ({ orderId, refunded: true, amount: '42.00 EUR' }),
});

const trackParcel = tool({
  name: 'track_parcel',
  description: "Looks up where an order's parcel is.",
  parameters: z.object({ orderId: z.string() }),
  execute: async ({ orderId }) => ({ orderId, status: 'in transit', arrives: 'Thursday' }),
});

/** The model each agent runs on, and a line saying which they are. */
export interface DeskModels {
  label: string;
  triage: ModelClient;
  billing: ModelClient;
  shipping: ModelClient;
}

/**
 * OpenAI when `OPENAI_API_KEY` is set (`OPENAI_BASE_URL` for a compatible server, `OPENAI_MODEL`
 * for the model), otherwise scripted answers that work offline.
 */
export async function createModels(): Promise<DeskModels> {
  if (process.env.OPENAI_API_KEY) {
    // Imported only here: the offline run never loads the `openai` package.
    const { OpenAIChatModel } = await import('@baton/core/openai');
    const model = new OpenAIChatModel({ model: process.env.OPENAI_MODEL || 'gpt-4.1-mini' });
    return { label: `OpenAI (${model.model})`, triage: model, billing: model, shipping: model };
  }
  return {
    label: 'scripted answers (offline; set OPENAI_API_KEY to run on OpenAI)',
    triage: new ScriptedModel(triageScript, { model: 'scripted-triage' }),
    billing: new ScriptedModel(billingScript, { model: 'scripted-billing' }),
    shipping: new ScriptedModel(shippingScript, { model: 'scripted-shipping' }),
  };
}

/** Builds the workflow on a store. Call it again after a restart: everything it needs is in the store. */
export function buildDesk(store: Store, models: DeskModels): HandoffWorkflow {
  const triage = agent({
    name: 'triage',
    description: 'Greets customers and sends them to the right specialist.',
    instructions: 'Hand charges and refunds to billing, parcels to shipping. Never answer them yourself.',
    model: models.triage,
  });
  const billing = agent({
    name: 'billing',
    description: 'Charges, double charges and refunds.',
    instructions: 'For a double charge, call refund_order with the order id at once, then confirm in one sentence.',
    tools: [refundOrder],
    model: models.billing,
  });
  const shipping = agent({
    name: 'shipping',
    description: 'Parcels and deliveries.',
    instructions: 'Look the parcel up with track_parcel, then answer in two sentences; use earlier conversations.',
    tools: [trackParcel],
    model: models.shipping,
  });
  return new HandoffBuilder({ name: 'quickstart' })
    .participants(triage, billing, shipping)
    .coordinator(triage)
    .store(store)
    .memory(new EpisodicMemory()) // lexical recall (offline) of the same user's closed sessions
    .build();
}

// The scripts below choose each answer from what the agent was sent (not from a call counter), so a
// restarted process answers exactly as the first one would have. A live model does the same job.

const lastUserText = (messages: readonly ModelMessage[]) => messages.findLast((m) => m.role === 'user')?.content ?? '';
const orderIdIn = (text: string) => /\b\d{3,}\b/.exec(text)?.[0] ?? 'unknown';
/** The JSON result of `toolName` when it is the newest message (`{}` for a refusal, which is plain text). */
function resultOf(messages: readonly ModelMessage[], toolName: string): Record<string, string> | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'tool' || last.toolName !== toolName) return undefined;
  try {
    return JSON.parse(last.content) as Record<string, string>;
  } catch {
    return {};
  }
}

function triageScript(request: ModelRequest): ScriptedResponse {
  const text = lastUserText(request.messages);
  const to = /parcel|deliver/i.test(text) ? 'shipping' : /charge|refund/i.test(text) ? 'billing' : undefined;
  if (to === undefined) return { text: 'Hello! I can help with charges, refunds and parcels.' };
  const reason = to === 'billing' ? 'double charge' : 'parcel question';
  return { toolCalls: [{ name: `handoff_to_${to}`, arguments: { reason } }] };
}

function billingScript(request: ModelRequest): ScriptedResponse {
  const refund = resultOf(request.messages, 'refund_order');
  if (refund?.refunded) {
    return { text: `Done: the duplicate charge of ${refund.amount} on order ${refund.orderId} is refunded.` };
  }
  if (refund !== undefined) return { text: 'The refund was not approved; a colleague will look into it.' };
  return { toolCalls: [{ name: 'refund_order', arguments: { orderId: orderIdIn(lastUserText(request.messages)) } }] };
}

function shippingScript(request: ModelRequest): ScriptedResponse {
  const parcel = resultOf(request.messages, 'track_parcel');
  if (parcel === undefined) {
    return { toolCalls: [{ name: 'track_parcel', arguments: { orderId: orderIdIn(lastUserText(request.messages)) } }] };
  }
  // Mentions the refund only when episodic memory put the earlier conversation in this input.
  const recalled = request.messages.find((m) => m.role === 'context')?.content ?? '';
  const refund = /refunded/i.test(recalled) ? ' And yes: last time we refunded the double charge on it.' : '';
  const where = `Your parcel for order ${parcel.orderId} is ${parcel.status} and arrives ${parcel.arrives}.`;
  return { text: where + refund };
}
