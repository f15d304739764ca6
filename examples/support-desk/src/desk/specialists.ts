/** A specialist of the desk: its agent name, what triage sees of it, and the ABCD flows it covers. */
export interface SpecialistSpec {
  name: string;
  description: string;
  flows: readonly string[];
}

/**
 * The desk's six specialists and the ABCD flows each covers (the mapping the data README suggests).
 * Every one of ABCD's 10 flows belongs to exactly one specialist.
 */
export const SPECIALISTS: readonly SpecialistSpec[] = [
  {
    name: 'account',
    description:
      'Account access (username, password, two-factor) and account changes (address, name, phone, payment method, services).',
    flows: ['account_access', 'manage_account'],
  },
  {
    name: 'billing',
    description: 'Price and promo-code disputes, billing mistakes, subscriptions and their bills.',
    flows: ['purchase_dispute', 'subscription_inquiry'],
  },
  {
    name: 'orders',
    description: 'Orders (changes, payment, fees, cancellation) and shipping (status, cost, missing items).',
    flows: ['order_issue', 'shipping_issue'],
  },
  { name: 'returns', description: 'Defective or wrong items: refunds and returns.', flows: ['product_defect'] },
  {
    name: 'technical',
    description: 'Problems with the website: search, shopping cart, card payment, slowness.',
    flows: ['troubleshoot_site'],
  },
  {
    name: 'products',
    description:
      'Questions about an item (boots, shirts, jeans, jackets) or the store (pricing, membership, timing, policy).',
    flows: ['single_item_query', 'storewide_query'],
  },
];

/** The name of the triage coordinator. */
export const TRIAGE = 'triage';

const BY_FLOW = new Map(SPECIALISTS.flatMap((spec) => spec.flows.map((flow) => [flow, spec.name] as const)));

/**
 * The specialist that covers an ABCD flow.
 *
 * @returns the specialist's agent name, or `undefined` for a flow no specialist covers
 * @example
 * ```ts
 * specialistForFlow('shipping_issue'); // 'orders'
 * ```
 */
export function specialistForFlow(flow: string): string | undefined {
  return BY_FLOW.get(flow);
}
