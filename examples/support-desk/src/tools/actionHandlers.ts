import { createHash } from 'node:crypto';
import type { State, ToolContext } from '@baton/core';
import type { CustomerRecord, World } from './world.js';

/** A console action's arguments: its ABCD slots, each optional. */
export type SlotArgs = Partial<Record<string, string>>;

/** What an action returns: ABCD's console log line plus the facts the agent may use. */
export type ActionResult = { log: string } & Record<string, unknown>;

/** The conversation state the desk's tools keep in the session's state (changed only via `state.update`). */
export interface DeskState {
  /** The customer whose account is pulled up. */
  customerName?: string;
  verified?: boolean;
  validatedOrderId?: string;
  reason?: string;
  membershipLevel?: string;
  shippingStatus?: string;
  /** Refunds issued in this conversation, in dollars. */
  refunds?: Array<{ orderId: string | null; amount: number }>;
  /** Console actions that ran, in order. */
  actions?: string[];
}

type Handler = (args: SlotArgs, world: World, context: ToolContext) => ActionResult;

const desk = (context: ToolContext): DeskState => context.state.session as DeskState;

function update(context: ToolContext, recipe: (draft: DeskState) => void): void {
  context.state.update('session', (draft: State) => recipe(draft as DeskState));
}

function pulledUp(world: World, context: ToolContext): CustomerRecord {
  const name = desk(context).customerName;
  const customer = name === undefined ? undefined : world.findCustomer({ customer_name: name });
  if (customer === undefined)
    throw new Error("no account is pulled up. Call pull-up-account with the customer's full name or account ID first.");
  return customer;
}

const mismatch = (slot: string, value: string) =>
  new Error(`${slot} ${JSON.stringify(value)} does not match the account on file. Ask the customer to check it.`);

/** A zip code, phone number or email as compared: lower case, digits and letters only (`(555) 123-4567` = `555-123-4567`). */
const comparable = (value: string) => value.toLowerCase().replace(/[^a-z0-9@.]/g, '');

function dollars(value: string | undefined): number {
  const amount = Number(String(value ?? '').replace(/[$,\s]/g, ''));
  if (!Number.isFinite(amount) || amount <= 0)
    throw new Error(`amount ${JSON.stringify(value)} is not a positive dollar amount such as "40" or "$40.50".`);
  return Math.round(amount * 100) / 100;
}

function code(context: ToolContext, kind: string, length: number): string {
  return createHash('sha256').update(`${kind}:${context.sessionId}`).digest('hex').slice(0, length);
}

/** The value an action records: its `*_slotval` slot when given, otherwise its first non-empty slot. */
const first = (args: SlotArgs): string | undefined => {
  const values = Object.entries(args).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== '',
  );
  return (values.find(([slot]) => slot.endsWith('_slotval')) ?? values[0])?.[1];
};

/** The console actions' behaviour, by ABCD action name. Each throws an `Error` the agent sees as a tool error. */
export const ACTION_HANDLERS: Readonly<Record<string, Handler>> = {
  'pull-up-account': (args, world, context) => {
    if (!args.customer_name && !args.account_id) throw new Error('give customer_name or account_id.');
    const customer = world.findCustomer({ customer_name: args.customer_name, account_id: args.account_id });
    if (customer === undefined)
      throw new Error(
        `no account for ${JSON.stringify(args.customer_name ?? args.account_id)}. Ask the customer to check their full name or account ID.`,
      );
    update(context, (s) => {
      s.customerName = customer.name;
    });
    return { log: `Account has been pulled up for ${customer.name}.`, customerName: customer.name };
  },
  'verify-identity': (args, world, context) => {
    const customer = pulledUp(world, context);
    if (args.customer_name && args.customer_name.toLowerCase() !== customer.name.toLowerCase())
      throw mismatch('customer_name', args.customer_name);
    let matched = 0;
    if (args.account_id) {
      if (!customer.accountIds.includes(args.account_id.toUpperCase())) throw mismatch('account_id', args.account_id);
      matched += 1;
    }
    if (args.order_id) {
      if (world.findOrder(customer, args.order_id) === undefined) throw mismatch('order_id', args.order_id);
      matched += 1;
    }
    for (const [slot, known] of [
      ['zip_code', customer.zipCodes],
      ['phone', customer.phones],
      ['email', customer.emails],
    ] as const) {
      const value = args[slot];
      if (!value) continue;
      if (!known.some((k) => comparable(k) === comparable(value))) throw mismatch(slot, value);
      matched += 1;
    }
    if (matched < 2)
      throw new Error('identity needs two of account_id, order_id, zip_code, phone and email besides the name.');
    update(context, (s) => {
      s.verified = true;
    });
    // The console shows the verified account's username (what a customer who forgot it is told).
    return { log: 'Identity verification in progress ...', verified: true, username: customer.usernames[0] };
  },
  'validate-purchase': (args, world, context) => {
    const customer = pulledUp(world, context);
    const same = (values: string[], value: string) =>
      values.some((v) => v.toLowerCase() === value.trim().toLowerCase());
    if (args.username && !same(customer.usernames, args.username)) throw mismatch('username', args.username);
    if (args.email && !same(customer.emails, args.email)) throw mismatch('email', args.email);
    const order = world.findOrder(customer, args.order_id);
    if (order === undefined)
      throw new Error(
        args.order_id
          ? `order_id ${JSON.stringify(args.order_id)} is not an order of ${customer.name}.`
          : 'give the order_id.',
      );
    if (!args.username && !args.email) throw new Error('give the username or the email with the order_id.');
    update(context, (s) => {
      s.validatedOrderId = order.orderId;
    });
    return {
      log: 'Purchase validation in progress ...',
      orderId: order.orderId,
      product: order.product,
      amount: order.amount,
      shippingStatus: order.shippingStatus,
    };
  },
  'offer-refund': (args, world, context) => {
    const customer = pulledUp(world, context);
    const amount = dollars(args.amount);
    const order = world.findOrder(customer, desk(context).validatedOrderId) ?? customer.orders[0];
    if (order) order.refunded += amount;
    update(context, (s) => {
      if (s.refunds === undefined) s.refunds = [];
      s.refunds.push({ orderId: order?.orderId ?? null, amount });
    });
    return { log: `A refund has been made for the amount of $${amount}.`, amount };
  },
  'record-reason': (args, _world, context) => {
    const reason = first(args) ?? 'unspecified';
    update(context, (s) => {
      s.reason = reason;
    });
    return { log: `A reason of ${reason} has been recorded.` };
  },
  'enter-details': (args) => ({ log: `Details of ${first(args) ?? ''} have been entered.` }),
  'update-order': (args, world, context) => {
    const customer = pulledUp(world, context);
    const change = first(args) ?? 'change order';
    const order = world.findOrder(customer, desk(context).validatedOrderId) ?? customer.orders[0];
    order?.changes.push(change);
    if (args.payment_method && order) order.paymentMethod = args.payment_method;
    return { log: `Order has been updated with ${change}.` };
  },
  'update-account': (args, world, context) => {
    const customer = pulledUp(world, context);
    const change = first(args) ?? 'update';
    customer.changes.push(change);
    return { log: `Account has been updated with ${change}.` };
  },
  'shipping-status': (args, _world, context) => {
    const status = args.shipping_option ?? 'unknown';
    update(context, (s) => {
      s.shippingStatus = status;
    });
    return { log: `Shipping status of ${status} has been noted.` };
  },
  membership: (args, _world, context) => {
    const level = args.membership_level ?? 'unknown';
    update(context, (s) => {
      s.membershipLevel = level;
    });
    return { log: `Membership level of ${level} has been noted.` };
  },
  'make-purchase': (args, world, context) => {
    // A purchase on the customer's behalf; troubleshooting places it without pulling up the account first.
    const name = desk(context).customerName;
    const customer = name === undefined ? undefined : world.findCustomer({ customer_name: name });
    const product = args.product ?? 'the item';
    customer?.orders.push({
      orderId: code(context, `order${customer.orders.length}`, 10).replace(/[a-f]/g, '7'),
      product,
      amount: 0,
      refunded: 0,
      shippingStatus: 'order received',
      paymentMethod: 'credit card',
      changes: [],
    });
    return { log: `A purchase of ${product} was made.` };
  },
  'notify-team': (args) => ({ log: `The ${args.company_team ?? 'manager'} has been notified.` }),
  'subscription-status': (_args, world, context) => {
    const customer = pulledUp(world, context);
    return { log: 'Querying the system for subscription status ...', ...customer.subscription };
  },
  'make-password': (_args, _world, context) => ({
    log: 'A password has been generated.',
    password: code(context, 'password', 11),
  }),
  'promo-code': (_args, _world, context) => ({
    log: 'A promo code has been created.',
    promoCode: code(context, 'promo', 8).toUpperCase(),
  }),
  'send-link': () => ({ log: 'A link will be sent.' }),
  'ask-the-oracle': () => ({
    log: 'Querying the system for an answer ...',
    answer: 'The system shows the customer is right.',
  }),
  'select-faq': (args) => ({ log: `FAQ answer related to ${first(args) ?? 'the question'} was selected.` }),
  'search-faq': () => ({ log: 'Searching the FAQ pages ...' }),
};

/**
 * Runs a console action against the world and the conversation state.
 * Actions without their own behaviour (`search-boots`, `try-again`, …) log what ABCD's console logs.
 *
 * @returns the action's result (`{ log, …facts }`)
 * @throws {Error} with a message that tells the agent what to fix (an unknown account, a mismatch)
 */
export function runAction(action: string, args: SlotArgs, world: World, context: ToolContext): ActionResult {
  const handler = ACTION_HANDLERS[action];
  const result = handler
    ? handler(args, world, context)
    : {
        log: action.startsWith('search-')
          ? `System Action: search ${action.slice(7)}`
          : 'Agent is looking for solutions ...',
      };
  context.state.update('session', (draft: State) => {
    const desk = draft as DeskState;
    if (desk.actions === undefined) desk.actions = [];
    desk.actions.push(action);
  });
  return result;
}
