import { agent, type ModelClient, tool } from '@baton/core';
import { z } from 'zod';

/**
 * The tool-choice tests' agent: `shipping`, with one tool, `look_up_order`, which pushes each order id
 * it is called with onto `looked` and answers `<id>: shipped`.
 * @param options agent options to add, e.g. `{ resetToolChoice: false, maxSteps: 3 }`
 */
export function shippingAgent(
  model: ModelClient,
  looked: string[],
  options: { resetToolChoice?: boolean; maxSteps?: number } = {},
) {
  return agent({
    name: 'shipping',
    description: 'Orders.',
    instructions: 'Track orders.',
    model,
    ...options,
    tools: [
      tool({
        name: 'look_up_order',
        description: 'Finds an order by id.',
        parameters: z.object({ orderId: z.string() }),
        execute: ({ orderId }) => {
          looked.push(orderId);
          return `${orderId}: shipped`;
        },
      }),
    ],
  });
}
