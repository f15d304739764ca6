/**
 * Values ABCD's written guidelines (guidelines.json, which ABCD's agents followed) tell the agent to
 * enter into a console action for a case, where the guideline names them rather than the customer.
 */

/**
 * Refund amounts the guidelines name: a refund the customer does not know the amount of is $50 ("If
 * the customer does not know, the default amount is $50", Initiate Refund); a service added by
 * mistake is refunded $40 ("The amount should be for $40", Status Service Added); shipping paid for
 * nothing gets the standard $8 back ("Standard shipping is $8.00", Shipping Cost).
 */
export const GUIDELINE_AMOUNTS: Readonly<Record<string, string>> = {
  refund_initiate: '50',
  status_service_added: '40',
  cost: '8',
};

/** What the guideline has the agent type into an action's field, by case then action (e.g. "Enter in 'remove service' and use the [Update Account] button"). */
const ENTRIES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  status_service_added: { 'update-account': 'remove service' },
  status_service_removed: { 'update-account': 'add service' },
  manage_pay_bill: { 'update-account': 'renew subscription' },
  manage_extension: { 'update-account': 'extend subscription' },
  mistimed_billing_already_returned: { 'update-order': 'give credit' },
  mistimed_billing_never_bought: { 'update-order': 'give credit' },
  manage_upgrade: { 'update-order': 'tomorrow' },
  manage_downgrade: { 'update-order': 'next week' },
  cost: { 'update-order': 'waive fee' },
  bad_price_competitor: { 'record-reason': 'competitor' },
  bad_price_yesterday: { 'record-reason': 'yesterday' },
};

/** Reasons a guideline offers a choice of: the one the customer's words name is recorded. */
const REASON_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  status_service_added: ['email', 'spouse', 'news'],
  status_service_removed: ['email', 'spouse', 'news'],
  status_credit_missing: ['subscription refund', 'previous purchase', 'promotional package'],
};

/** The slot each action's entry goes into (ontology.json). */
const ENTRY_SLOT: Readonly<Record<string, string>> = {
  'update-account': 'account_slotval',
  'update-order': 'order_slotval',
  'record-reason': 'reason_slotval',
};

/**
 * The value a guideline has the agent enter into `action` for the case `subflow`, by the action's
 * slot: a fixed entry (`update-account` → `{ account_slotval: 'remove service' }` for a service added
 * by mistake), or the one of a guideline's reasons the customer named ("my wife told me" does not
 * count, "my spouse" does).
 *
 * @param customerText everything the customer said so far
 * @returns `{ slot: value }`, empty when the guideline names nothing for it
 * @example
 * ```ts
 * guidelineEntry('status_service_added', 'record-reason', 'I saw it in the news'); // { reason_slotval: 'news' }
 * ```
 */
export function guidelineEntry(subflow: string, action: string, customerText: string): Partial<Record<string, string>> {
  const slot = ENTRY_SLOT[action];
  if (slot === undefined) return {};
  const fixed = ENTRIES[subflow]?.[action];
  if (fixed !== undefined) return { [slot]: fixed };
  if (action !== 'record-reason') return {};
  const lower = customerText.replace(/[\w.+-]+@[\w-]+\.[\w.]+/g, ' ').toLowerCase(); // an email address names no reason
  const named = REASON_OPTIONS[subflow]?.find((option) => new RegExp(`\\b${option}\\b`).test(lower));
  return named === undefined ? {} : { [slot]: named };
}
