import { createHash } from 'node:crypto';
import type { AbcdConversation } from '@baton/support-desk-models';
import { ABCD_CUSTOMER_NAMES, extractSlots } from '@baton/support-desk-models';

/** An order in the example's world. `amount` and `refunded` are in dollars. */
export interface OrderRecord {
  orderId: string;
  product: string;
  amount: number;
  refunded: number;
  shippingStatus: string;
  paymentMethod: string;
  /** Changes made through `update-order`, oldest first. */
  changes: string[];
}

/** A customer of the example's world, with every id and contact detail the customer may quote. */
export interface CustomerRecord {
  name: string;
  accountIds: string[];
  usernames: string[];
  emails: string[];
  zipCodes: string[];
  /** Phone numbers as the customer writes them (`555-123-4567`). */
  phones: string[];
  membershipLevel: string;
  subscription: { status: 'active' | 'inactive'; dueAmount: number; dueDate: string };
  orders: OrderRecord[];
  /** Changes made through `update-account`, oldest first. */
  changes: string[];
}

/**
 * The example's world: the company's database of customers and their orders, which the specialists'
 * tools read and change. One `World` is one small in-memory database; it is not conversation state
 * (that lives in the session's state, changed by the tools through `state.update`).
 *
 * @example
 * ```ts
 * const world = World.demo();
 * world.findCustomer({ customer_name: 'Joyce Wu' })?.accountIds[0];
 * ```
 */
export class World {
  constructor(readonly customers: CustomerRecord[]) {}

  /**
   * The customer with this name or account id (case-insensitive).
   * @returns the customer, or `undefined` when none matches
   */
  findCustomer(query: {
    customer_name?: string | undefined;
    account_id?: string | undefined;
  }): CustomerRecord | undefined {
    const name = query.customer_name?.trim().toLowerCase();
    const account = query.account_id?.trim().toUpperCase();
    return this.customers.find(
      (c) =>
        (name !== undefined && c.name.toLowerCase() === name) ||
        (account !== undefined && c.accountIds.includes(account)),
    );
  }

  /** The customer's order with this id, or `undefined`. */
  findOrder(customer: CustomerRecord, orderId: string | undefined): OrderRecord | undefined {
    return orderId === undefined ? undefined : customer.orders.find((order) => order.orderId === orderId.trim());
  }

  /**
   * A world holding the one customer of an ABCD conversation, seeded from what the conversation
   * itself says (names, account ids, order ids, usernames, emails, amounts, membership, shipping
   * status; the console's action log too), so the tools find what the customer quotes. Anything
   * the conversation does not say is derived deterministically from its id.
   */
  static fromConversation(conversation: AbcdConversation): World {
    const seen: Record<string, string[]> = {};
    const note = (slot: string, value: string | undefined) => {
      if (value === undefined) return;
      const values = seen[slot] ?? [];
      if (!values.includes(value)) values.push(value);
      seen[slot] = values;
    };
    for (const turn of conversation.turns) {
      if (turn.role === 'agent') continue;
      const slots = extractSlots(turn.text);
      for (const [slot, value] of Object.entries(slots)) note(slot, value);
      const pulled = /pulled up for ([A-Za-z]+ [A-Za-z]+)/.exec(turn.text);
      if (pulled) note('customer_name', pulled[1]);
    }
    const digits = digitsOf(conversation.id);
    const first = (slot: string, fallback: string) => seen[slot]?.[0] ?? fallback;
    const name = first('customer_name', 'Joyce Wu');
    const amounts = (seen.amount ?? []).map(Number).filter((n) => n > 0);
    const orderIds = seen.order_id ?? [digits.slice(0, 10)];
    const customer: CustomerRecord = {
      name,
      accountIds: (seen.account_id ?? [accountIdOf(conversation.id)]).map((id) => id.toUpperCase()),
      usernames: seen.username ?? [`${name.split(' ')[0]!.toLowerCase()}${digits.slice(0, 3)}`],
      emails: seen.email ?? [`${name.split(' ')[0]!.toLowerCase()}${digits.slice(0, 3)}@email.com`],
      zipCodes: seen.zip_code ?? [digits.slice(3, 8)],
      phones: seen.phone ?? [`(${digits.slice(5, 8)}) ${digits.slice(8, 11)}-${digits.slice(11, 15)}`],
      membershipLevel: first('membership_level', 'bronze'),
      subscription: {
        status: 'active',
        dueAmount: amounts[0] ?? 20 + (Number(digits.slice(0, 2)) % 80),
        dueDate: 'the 15th of next month',
      },
      orders: orderIds.map((orderId, index) => ({
        orderId,
        product: first('product', 'shirt'),
        amount: amounts[index] ?? amounts[0] ?? 20 + (Number(digits.slice(2, 5)) % 180),
        refunded: 0,
        shippingStatus: first('shipping_option', 'in transit'),
        paymentMethod: first('payment_method', 'credit card'),
        changes: [],
      })),
      changes: [],
    };
    return new World([customer]);
  }

  /** A world of ABCD's ten role-played customers, one order each, for the interactive chat. */
  static demo(): World {
    return new World(
      ABCD_CUSTOMER_NAMES.map((name, index) => {
        const digits = digitsOf(name);
        const [firstName, lastName] = name.toLowerCase().split(' ') as [string, string];
        return {
          name,
          accountIds: [accountIdOf(name)],
          usernames: [`${firstName[0]}${lastName}${digits.slice(0, 3)}`],
          emails: [`${firstName[0]}${lastName}${digits.slice(0, 3)}@email.com`],
          zipCodes: [digits.slice(3, 8)],
          phones: [`(${digits.slice(5, 8)}) ${digits.slice(8, 11)}-${digits.slice(11, 15)}`],
          membershipLevel: ['guest', 'bronze', 'silver', 'gold'][index % 4]!,
          subscription: { status: 'active', dueAmount: 49, dueDate: 'the 15th of next month' },
          orders: [
            {
              orderId: digits.slice(0, 10),
              product: 'tommy hilfiger shirt',
              amount: 40 + index * 5,
              refunded: 0,
              shippingStatus: 'in transit',
              paymentMethod: 'credit card',
              changes: [],
            },
          ],
          changes: [],
        };
      }),
    );
  }
}

/**
 * One line per customer of a world, with what a customer is asked for (name, account id, username, email, zip code,
 * phone) and their first order: what the chat prints at start and the web page lists, so that a newcomer can play one.
 *
 * @example
 * ```ts
 * customerLines(World.demo())[0]; // 'Alessandro Phoenix: account …, username aphoenix…, email aphoenix…@email.com, zip …, phone (…) …, order … ($40)'
 * ```
 */
export function customerLines(world: World): string[] {
  return world.customers.map((c) => {
    const order = c.orders[0];
    return [
      `${c.name}: account ${c.accountIds[0]}`,
      `username ${c.usernames[0]}`,
      `email ${c.emails[0]}`,
      `zip ${c.zipCodes[0]}`,
      `phone ${c.phones[0]}`,
      ...(order === undefined ? [] : [`order ${order.orderId} ($${order.amount})`]),
    ].join(', ');
  });
}

/**
 * Which world each session acts on: replays register one world per conversation; every other
 * session (the interactive chat) acts on the fallback world.
 */
export class WorldDirectory {
  readonly #bySession = new Map<string, World>();
  constructor(readonly fallback: World = World.demo()) {}

  /** Makes `world` the world of session `sessionId`. */
  set(sessionId: string, world: World): void {
    this.#bySession.set(sessionId, world);
  }

  /** The world of session `sessionId` (the fallback when none was set). */
  get(sessionId: string): World {
    return this.#bySession.get(sessionId) ?? this.fallback;
  }
}

function digitsOf(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return hex.replace(/[a-f]/g, (c) => String(c.charCodeAt(0) % 10)).slice(0, 20);
}

function accountIdOf(seed: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const bytes = createHash('sha256').update(`account:${seed}`).digest();
  return Array.from(bytes.subarray(0, 10), (b) => alphabet[b % alphabet.length]).join('');
}
