import { runToolCall, StateContainer, type Tool } from '@baton/core';
import type { AbcdConversation } from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';
import { loadOntology } from '../src/data/ontology.js';
import type { DeskState } from '../src/tools/actionHandlers.js';
import { createActionTools } from '../src/tools/actionTools.js';
import { World, WorldDirectory } from '../src/tools/world.js';

const ontology = loadOntology();

// abcd-dev-0028 (order_issue), shortened: what the customer quotes seeds the world.
const conversation: AbcdConversation = {
  id: 'abcd-dev-0028',
  flow: 'order_issue',
  subflow: 'status_payment_method',
  turns: [
    {
      role: 'customer',
      text: 'I need to check the status of a Shirt I ordered. I paid by credit card but my account lists PayPal.',
    },
    { role: 'customer', text: 'I believe my name is listed as David Williams.  The Account ID is 1VGSVKMH3K.' },
    { role: 'action', text: 'Account has been pulled up for David Williams.' },
    { role: 'customer', text: 'Yes.  The Order ID is 7488442726' },
    { role: 'customer', text: 'The shipping status says Delivered.' },
  ],
};

function setup(seed: AbcdConversation = conversation) {
  const worlds = new WorldDirectory();
  worlds.set('s1', World.fromConversation(seed));
  const tools = createActionTools(ontology, worlds);
  const state = new StateContainer({ session: {}, branch: {} });
  const call = async (name: string, args: Record<string, unknown>, approved?: boolean) =>
    runToolCall({ id: `c-${name}`, name, arguments: JSON.stringify(args) }, tools as ReadonlyMap<string, Tool>, {
      sessionId: 's1',
      branchId: 'main',
      agent: 'orders',
      signal: new AbortController().signal,
      state,
      ...(approved === undefined ? {} : { approvals: new Map([[`c-${name}`, { approved }]]) }),
    });
  return { tools, state, call, world: worlds.get('s1') };
}

describe('createActionTools', () => {
  it("builds one tool per ABCD console action, its parameters the action's slots (and the guidelines' extra ones)", () => {
    const { tools } = setup();
    expect(tools.size).toBe(ontology.actions.size);
    expect(tools.size).toBe(30);
    for (const [name, { slots }] of ontology.actions) {
      const schema = tools.get(name)!.jsonSchema as {
        properties?: Record<string, { type: string; description: string }>;
      };
      expect(Object.keys(schema.properties ?? {})).toEqual(
        name === 'verify-identity' ? [...slots, 'phone', 'email'] : [...slots],
      );
      for (const property of Object.values(schema.properties ?? {}))
        expect(property).toMatchObject({ type: 'string', description: expect.any(String) });
    }
    expect(
      (tools.get('membership')!.jsonSchema as { properties: Record<string, { description: string }> }).properties
        .membership_level!.description,
    ).toContain('gold');
  });

  it('asks a human before offer-refund runs, and only then', () => {
    const { tools } = setup();
    expect([...tools.values()].filter((t) => t.needsApproval === true).map((t) => t.name)).toEqual(['offer-refund']);
  });
});

describe('console actions on the world', () => {
  it('verify identity with the name, zip code and phone number, as recovering a username does (the phone written either way)', async () => {
    const { call: run, world } = setup({
      id: 'recover-1',
      flow: 'account_access',
      subflow: 'recover_username',
      turns: [
        { role: 'customer', text: 'I forgot my username. I am Crystal Minh' },
        { role: 'customer', text: '63449' },
        { role: 'customer', text: 'phone is 136-472-4030' },
      ],
    });
    expect(world.customers[0]).toMatchObject({ zipCodes: ['63449'], phones: ['136-472-4030'] });
    await run('pull-up-account', { customer_name: 'Crystal Minh' });
    const verified = await run('verify-identity', {
      customer_name: 'Crystal Minh',
      zip_code: '63449',
      phone: '(136) 472-4030',
    });
    expect(verified).toMatchObject({
      type: 'write',
      write: { isError: false, content: expect.stringContaining('Identity verification in progress') },
    });
    expect(JSON.parse(verified.type === 'write' ? verified.write.content : '{}')).toMatchObject({
      verified: true,
      username: world.customers[0]!.usernames[0],
    });
    const wrongPhone = await run('verify-identity', {
      customer_name: 'Crystal Minh',
      zip_code: '63449',
      phone: '136-472-9999',
    });
    expect(wrongPhone).toMatchObject({
      type: 'write',
      write: { isError: true, content: expect.stringContaining('phone "136-472-9999" does not match') },
    });
    const onlyZip = await run('verify-identity', { customer_name: 'Crystal Minh', zip_code: '63449' });
    expect(onlyZip).toMatchObject({
      type: 'write',
      write: { isError: true, content: expect.stringContaining('identity needs two of') },
    });
  });

  it('pull up the account the customer names and keep it in the session state', async () => {
    const { call, state } = setup();
    const outcome = await call('pull-up-account', { customer_name: 'david williams' });
    expect(outcome).toMatchObject({ type: 'write', write: { isError: false } });
    expect(JSON.parse(outcome.type === 'write' ? outcome.write.content : '{}').log).toBe(
      'Account has been pulled up for David Williams.',
    );
    expect((state.session as DeskState).customerName).toBe('David Williams');
    expect(state.patches.session.some((p) => p.path[0] === 'customerName')).toBe(true);
  });

  it('answer an unknown customer, a mismatch and a missing account with errors the agent can act on', async () => {
    const { call } = setup();
    const before = await call('verify-identity', {
      customer_name: 'David Williams',
      account_id: '1VGSVKMH3K',
      order_id: '7488442726',
    });
    expect(before).toMatchObject({
      type: 'write',
      write: { isError: true, content: expect.stringContaining('Call pull-up-account') },
    });
    const unknown = await call('pull-up-account', { customer_name: 'Nobody Here' });
    expect(unknown).toMatchObject({
      write: { isError: true, content: expect.stringContaining('no account for "Nobody Here"') },
    });
    await call('pull-up-account', { account_id: '1vgsvkmh3k' });
    const wrong = await call('verify-identity', {
      customer_name: 'David Williams',
      account_id: '1VGSVKMH3K',
      order_id: '1111111111',
    });
    expect(wrong).toMatchObject({
      write: { isError: true, content: expect.stringContaining('order_id "1111111111" does not match') },
    });
    const bad = await call('verify-identity', { customer_name: 42 });
    expect(bad).toMatchObject({
      write: { isError: true, content: expect.stringContaining('invalid arguments for verify-identity') },
    });
  });

  it('verify the identity with what the conversation quoted, and refund only once approved', async () => {
    const { call, state, world } = setup();
    await call('pull-up-account', { customer_name: 'David Williams' });
    const verified = await call('verify-identity', {
      customer_name: 'David Williams',
      account_id: '1VGSVKMH3K',
      order_id: '7488442726',
    });
    expect(verified).toMatchObject({ write: { isError: false } });
    expect((state.session as DeskState).verified).toBe(true);
    const pending = await call('offer-refund', { amount: '$25' });
    expect(pending).toMatchObject({
      type: 'request',
      request: { type: 'tool_approval', toolName: 'offer-refund', arguments: '{"amount":"$25"}' },
    });
    expect(world.customers[0]!.orders[0]!.refunded).toBe(0);
    const rejected = await call('offer-refund', { amount: '$25' }, false);
    expect(rejected).toMatchObject({ write: { isError: true, content: expect.stringContaining('rejected') } });
    const refunded = await call('offer-refund', { amount: '$25' }, true);
    expect(refunded).toMatchObject({
      write: { isError: false, content: expect.stringContaining('A refund has been made for the amount of $25.') },
    });
    expect(world.customers[0]!.orders[0]!.refunded).toBe(25);
    expect((state.session as DeskState).refunds).toEqual([{ orderId: '7488442726', amount: 25 }]);
    const notMoney = await call('offer-refund', { amount: 'lots' }, true);
    expect(notMoney).toMatchObject({
      write: { isError: true, content: expect.stringContaining('"lots" is not a positive dollar amount') },
    });
  });
});

describe('World.fromConversation', () => {
  it('seeds the customer with what the conversation says', () => {
    const [customer] = World.fromConversation(conversation).customers;
    expect(customer).toMatchObject({ name: 'David Williams', accountIds: ['1VGSVKMH3K'] });
    expect(customer!.orders.map((o) => [o.orderId, o.shippingStatus, o.paymentMethod])).toEqual([
      ['7488442726', 'delivered', 'credit card'],
    ]);
  });
});
