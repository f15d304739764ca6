import { type Tool, tool } from '@baton/core';
import { GUIDELINE_SLOTS } from '@baton/support-desk-models';
import { z } from 'zod';
import type { Ontology } from '../data/ontology.js';
import { runAction, type SlotArgs } from './actionHandlers.js';
import type { WorldDirectory } from './world.js';

/** The console actions that move money: a human approves each call before it runs. */
export const ACTIONS_NEEDING_APPROVAL: ReadonlySet<string> = new Set(['offer-refund']);

const ACTION_DESCRIPTIONS: Record<string, string> = {
  'pull-up-account':
    "Pulls up the customer's account by full name or account ID. Every account-related flow starts here.",
  'verify-identity':
    "Verifies the customer's identity: full name plus two of account ID, order ID, zip code, phone number and email.",
  'validate-purchase': 'Confirms a purchase is valid: username or email, and the order ID.',
  'offer-refund': 'Refunds an amount in dollars to the customer. A human must approve it.',
  'record-reason':
    'Records why the customer asks (a reason, product, address, payment method, phone or refund target).',
  'enter-details': 'Enters details the customer gave (username, email, PIN, security answer, address, account ID).',
  'update-order': 'Changes an order: timing, address, item, payment method, cancellation, credit or fee waiver.',
  'update-account': 'Changes the account: address, name, phone, payment method, services or subscription.',
  'shipping-status': 'Notes the shipping status the customer sees.',
  membership: "Notes the customer's membership level.",
  'make-purchase': 'Places an order for a product.',
  'notify-team': 'Notifies a team (manager, website team, purchasing department).',
  'subscription-status': "Looks up the customer's subscription: status, amount and date due.",
  'make-password': 'Generates a new temporary password.',
  'promo-code': 'Creates a promo code for the customer.',
  'send-link': 'Sends the customer a link by email.',
  'ask-the-oracle': "Asks the system whether the customer's claim is right.",
  'search-faq': 'Searches the FAQ pages.',
  'select-faq': 'Selects an FAQ answer.',
  'try-again': 'Asks the customer to try again.',
  'log-out-in': 'Asks the customer to log out and back in.',
  instructions: 'Gives the customer instructions.',
};

const SLOT_DESCRIPTIONS: Record<string, string> = {
  customer_name: "The customer's full name, e.g. Joyce Wu.",
  account_id: 'The account ID: 10 capital letters and digits, e.g. 1VGSVKMH3K.',
  order_id: 'The order ID: 10 digits, e.g. 7488442726.',
  zip_code: 'The 5-digit zip code.',
  username: "The customer's username, e.g. cminh1982.",
  email: "The customer's email address.",
  amount: 'An amount in dollars, e.g. 40 or $40.50.',
  pin_number: "The customer's PIN.",
  security_answer: 'The answer to the security question.',
  phone: 'A phone number, e.g. (003) 635-6919.',
  street_address: 'A street address.',
  full_address: 'A full address with city, state and zip code.',
  product: 'A product: brand and item, e.g. tommy hilfiger shirt.',
};

function slotDescription(slot: string, ontology: Ontology): string {
  const known = SLOT_DESCRIPTIONS[slot];
  if (known !== undefined) return known;
  const values = ontology.enumerable[slot];
  const words = slot.replace(/_slotval$/, '').replace(/_/g, ' ');
  return values && values.length > 0 ? `The ${words}, one of: ${values.slice(0, 16).join(', ')}.` : `The ${words}.`;
}

/**
 * Builds one tool per ABCD console action from `ontology.json`: the tool's name is the action's
 * (`pull-up-account`), its zod parameters are the action's slots and {@link GUIDELINE_SLOTS} (each an
 * optional string with a description), and it acts on the session's world through {@link runAction}. `offer-refund`
 * needs a human's approval.
 *
 * @returns the tools by action name
 * @example
 * ```ts
 * const tools = createActionTools(loadOntology(), new WorldDirectory());
 * tools.get('verify-identity')!.jsonSchema; // { type: 'object', properties: { customer_name: …, … } }
 * ```
 */
export function createActionTools(ontology: Ontology, worlds: WorldDirectory): ReadonlyMap<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const [name, action] of ontology.actions) {
    const slots = [...action.slots, ...(GUIDELINE_SLOTS[name] ?? []).filter((slot) => !action.slots.includes(slot))];
    const shape: Record<string, z.ZodOptional<z.ZodString>> = {};
    for (const slot of slots) shape[slot] = z.string().describe(slotDescription(slot, ontology)).optional();
    const parameters = z.object(shape);
    tools.set(
      name,
      tool({
        name,
        description: ACTION_DESCRIPTIONS[name] ?? `The ${name} console action.`,
        parameters,
        needsApproval: ACTIONS_NEEDING_APPROVAL.has(name),
        execute: (args, context) => runAction(name, args as SlotArgs, worlds.get(context.sessionId), context),
      }),
    );
  }
  return tools;
}
