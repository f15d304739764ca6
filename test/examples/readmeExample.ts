import { agent, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing'; // or OpenAIChatModel from '@baton/core/openai'
import { HandoffBuilder } from '@baton/handoff';
import { z } from 'zod';

const refund = tool({
  name: 'refund_order',
  description: 'Refunds an order.',
  parameters: z.object({ orderId: z.string() }),
  needsApproval: true, // a human approves before it runs
  execute: async ({ orderId }) => ({ orderId, refunded: true }),
});

const triage = agent({
  name: 'triage', description: 'Routes customers.', instructions: 'Route to the right specialist.',
  model: new ScriptedModel([{ toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'double charge' } }] }]),
});
const billing = agent({
  name: 'billing', description: 'Refunds and double charges.', instructions: 'Fix billing problems.', tools: [refund],
  model: new ScriptedModel([{ toolCalls: [{ name: 'refund_order', arguments: { orderId: '1234' } }] }, { text: 'Refunded.' }]),
});

const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).coordinator(triage).build();
const session = await desk.session({ id: 'chat-1', userId: 'u-42' });
for await (const event of session.send('I was charged twice for order 1234')) console.log(event.type);
const [approval] = session.pendingRequests;                 // the refund waits for a human
console.log(approval);                                      // { type: 'tool_approval', toolName: 'refund_order', … }
for await (const event of session.respond(approval!.id, { approved: true })) console.log(event.type);
await session.close({ reason: 'resolved' });
for (const m of session.messages) console.log(m.role, m.agent ?? '-', m.content || m.toolCalls?.map((c) => c.name).join());
console.log(session.info.status);                           // closed
