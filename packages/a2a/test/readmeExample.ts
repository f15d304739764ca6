import { once } from 'node:events';
import { ClientFactory } from '@a2a-js/sdk/client';
import { a2aApp, textOf, userMessage } from '@baton/a2a';
import { agent, InMemoryStore, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { z } from 'zod';

const refund = tool({
  name: 'refund',
  description: 'Refunds an amount in EUR.',
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: async ({ amount }) => `Refunded ${amount} EUR.`,
});
const model = new ScriptedModel([
  { toolCalls: [{ name: 'refund', arguments: { amount: 40 } }] },
  { text: 'Refunded 40 EUR.' },
]);
const billing = agent({
  name: 'billing',
  description: 'Refunds.',
  instructions: 'Refund when asked.',
  model,
  tools: [refund],
});
const desk = new HandoffBuilder({ name: 'desk' }).participants(billing).store(new InMemoryStore()).build();

const server = a2aApp(desk, { url: 'http://127.0.0.1:41731/' }).listen(41731, '127.0.0.1');
await once(server, 'listening');
const client = await new ClientFactory().createFromUrl('http://127.0.0.1:41731');
const send = (text: string, ids = {}) =>
  client.sendMessage({ tenant: '', message: userMessage(text, ids), configuration: undefined, metadata: undefined });

const task = await send('Please refund my 40 EUR.'); // a Task in input-required: the refund waits for approval
if ('status' in task) {
  console.log(textOf(task.status?.message?.parts)); // billing asks to approve refund({"amount":40}). …
  const done = await send('yes', { contextId: task.contextId, taskId: task.id }); // the approval, over A2A
  if ('status' in done) console.log(textOf(done.status?.message?.parts)); // Refunded 40 EUR.
}
server.close();
