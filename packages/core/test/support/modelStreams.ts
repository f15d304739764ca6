import type { ModelStreamEvent, ToolDefinition } from '@baton/core';

/** Reads a model stream to its end, keeping every event in order. */
export async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A function definition as a model receives it: `look_up_order({ orderId })`. */
export const lookUpOrder: ToolDefinition = {
  name: 'look_up_order',
  description: 'Finds an order by id.',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};
