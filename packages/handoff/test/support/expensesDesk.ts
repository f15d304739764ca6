/**
 * The expenses desk of the asset tests: one agent whose tool reads an uploaded receipt by the asset
 * id the model saw in the user's message.
 */
import { type Store, tool } from '@baton/core';
import { z } from 'zod';
import { HandoffBuilder } from '../../src/index.js';
import { lastOf, scriptedAgent } from './helpers.js';

/** The text of the receipt the tests upload. */
export const RECEIPT = 'ACME Café\nTotal: 42.00 EUR\n';
/** What the tool returns after reading it. */
export const READ = 'receipt.txt (text/plain; charset=utf-8): total 42.00 EUR';

/** A tool that reads an uploaded receipt by its asset id and returns its total (not the whole text). */
const readReceipt = tool({
  name: 'read_receipt',
  description: 'Reads the total of a receipt the user uploaded.',
  parameters: z.object({ assetId: z.string() }),
  execute: async ({ assetId }, context) => {
    const stored = await context.assets?.get(assetId);
    if (stored === undefined) return `No asset ${assetId}.`;
    const total = /Total: (.+)/.exec(Buffer.from(stored.bytes).toString('utf8'))?.[1];
    return `${stored.ref.name} (${stored.ref.contentType}): total ${total}`;
  },
});

/** An expenses agent: on a user message naming an attached asset, reads it with the tool, then answers with what it read. */
export function expensesWorkflow(store: Store) {
  const seen: string[] = [];
  const expenses = scriptedAgent(
    'expenses',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user') {
        seen.push(last.content);
        const id = /\[Attached asset ([^:\]]+):/.exec(last.content)?.[1];
        return id === undefined
          ? { text: 'Please attach the receipt.' }
          : { toolCalls: [{ name: 'read_receipt', arguments: { assetId: id } }] };
      }
      return { text: `Filed: ${last?.content ?? ''}` };
    },
    [readReceipt],
  );
  return { workflow: new HandoffBuilder().participants(expenses).store(store).build(), seen };
}
