import type { ModelMessage } from '@baton/core';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { decideNextStep, type PolicyCase, viewConversation } from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';

const ontology = loadOntology();

function policyFor(subflow: string, agent = 'orders'): PolicyCase {
  return {
    agent,
    flow: ontology.flowOf(subflow)!,
    subflow,
    sequence: ontology.sequences[subflow]!,
    slotsOf: (action) => ontology.actions.get(action)?.slots ?? [],
  };
}

/** A conversation as a specialist's model sees it: the customer's first message, then its tool calls with their results. */
function history(
  agent: string,
  first: string,
  steps: Array<[name: string, args: Record<string, string>, result: string]>,
): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'user', content: first }];
  steps.forEach(([name, args, result], index) => {
    messages.push({
      role: 'assistant',
      agent,
      content: '',
      toolCalls: [{ id: `c${index}`, name, arguments: JSON.stringify(args) }],
    });
    messages.push({ role: 'tool', toolCallId: `c${index}`, toolName: name, content: result });
  });
  return messages;
}

const ok = (log: string) => JSON.stringify({ log });
const ask = (prompt: string, answer: string): [string, Record<string, string>, string] => [
  'request_user_input',
  { prompt },
  answer,
];

describe('decideNextStep', () => {
  it("runs a step again when an earlier step of the guideline ran after it, so the guideline's order holds", () => {
    // manage (shipping_issue): pull-up-account > shipping-status > validate-purchase > update-order. The order's
    // details came late: update-order ran before validate-purchase, so it runs again after it.
    const messages = history('orders', 'I need to change the address my order ships to', [
      ['pull-up-account', { customer_name: 'Joyce Wu' }, ok('Account has been pulled up for Joyce Wu.')],
      ['shipping-status', { shipping_option: 'in transit' }, ok('Shipping status of in transit has been noted.')],
      ['update-order', {}, ok('Order has been updated with change order.')],
      ask(
        'To validate the purchase, may I have your username, email address and order ID?',
        'jwu15425, order 6072880470',
      ),
      [
        'validate-purchase',
        { username: 'jwu15425', order_id: '6072880470' },
        ok('Purchase validation in progress ...'),
      ],
    ]);
    expect(decideNextStep(viewConversation(messages), policyFor('manage'))).toMatchObject({
      type: 'call',
      name: 'update-order',
    });
  });

  it('never makes a refund twice, even when the order of the guideline would call for it', () => {
    // cost: pull-up-account > validate-purchase > shipping-status > update-order > offer-refund
    const messages = history('orders', 'I was charged for shipping on a late order, my name is Joyce Wu, I paid $8', [
      ['pull-up-account', { customer_name: 'Joyce Wu' }, ok('Account has been pulled up for Joyce Wu.')],
      [
        'offer-refund',
        { amount: '8' },
        JSON.stringify({ log: 'A refund has been made for the amount of $8.', amount: 8 }),
      ],
      ask(
        'To validate the purchase, may I have your username, email address and order ID?',
        'jwu15425, order 6072880470',
      ),
      [
        'validate-purchase',
        { username: 'jwu15425', order_id: '6072880470' },
        ok('Purchase validation in progress ...'),
      ],
      ask('What does the shipping status of your order say?', 'delivered'),
      ['shipping-status', { shipping_option: 'delivered' }, ok('Shipping status of delivered has been noted.')],
      ['update-order', {}, ok('Order has been updated with change order.')],
    ]);
    const decision = decideNextStep(viewConversation(messages), policyFor('cost'));
    expect(decision).toMatchObject({ type: 'reply' });
    expect(decision.type === 'reply' && decision.text).toContain('refunded $8');
  });

  it('asks again while the answers bring what it asked for, and stops after two answers in vain', () => {
    const prompt = 'To validate the purchase, may I have your username, email address and order ID?';
    const start: Array<[string, Record<string, string>, string]> = [
      ['pull-up-account', { customer_name: 'Joyce Wu' }, ok('Account has been pulled up for Joyce Wu.')],
    ];
    const policy = policyFor('missing');
    // One detail per answer: the username, then the email; the order ID is still missing, so it asks a third time.
    const detailByDetail = history('orders', 'My package never came', [
      ...start,
      ask(prompt, 'Username: jwu15425'),
      ask(prompt, 'Email Address: jwu15425@email.com'),
    ]);
    expect(decideNextStep(viewConversation(detailByDetail), policy)).toMatchObject({
      type: 'ask',
      prompt: 'To validate the purchase, may I have your order ID?',
    });
    // Two answers with nothing asked for: it tries the action once with what it has.
    const inVain = history('orders', 'My package never came', [
      ...start,
      ask(prompt, 'it never came'),
      ask(prompt, 'I am upset'),
    ]);
    expect(decideNextStep(viewConversation(inVain), policy)).toMatchObject({ type: 'call', name: 'validate-purchase' });
  });

  it("asks for a refund's amount, and when the customer does not say, refunds the guideline's ($40 for a service added by mistake)", () => {
    const steps: Array<[string, Record<string, string>, string]> = [
      ['pull-up-account', { customer_name: 'Joyce Wu' }, ok('Account has been pulled up for Joyce Wu.')],
      ['record-reason', { reason_slotval: 'status_service_added' }, ok('A reason of spouse has been recorded.')],
      ['ask-the-oracle', {}, ok('Querying the system for an answer ...')],
      ['update-account', {}, ok('Account has been updated with remove service.')],
    ];
    const policy = policyFor('status_service_added', 'account');
    const before = decideNextStep(
      viewConversation(history('account', 'A premium service was added that I never asked for', steps)),
      policy,
    );
    expect(before).toEqual({ type: 'ask', prompt: 'How much were you charged (the amount in dollars)?' });
    const after = history('account', 'A premium service was added that I never asked for', [
      ...steps,
      ask('How much were you charged (the amount in dollars)?', 'I am not sure'),
    ]);
    expect(decideNextStep(viewConversation(after), policy)).toEqual({
      type: 'call',
      name: 'offer-refund',
      args: { amount: '40' },
    });
  });

  it('verifies a username recovery with the name, zip code and phone number, as the guideline asks, and tells the username', () => {
    const policy = {
      ...policyFor('recover_username', 'account'),
      slotsOf: (action: string) => [
        ...(ontology.actions.get(action)?.slots ?? []),
        ...(action === 'verify-identity' ? ['phone', 'email'] : []),
      ],
    };
    const pulled = history('account', 'I forgot my username. I am Crystal Minh', [
      ['pull-up-account', { customer_name: 'Crystal Minh' }, ok('Account has been pulled up for Crystal Minh.')],
    ]);
    expect(decideNextStep(viewConversation(pulled), policy)).toEqual({
      type: 'ask',
      prompt: 'To verify your identity, may I have your zip code, phone number and email address?',
    });
    const steps: Array<[string, Record<string, string>, string]> = [
      ['pull-up-account', { customer_name: 'Crystal Minh' }, ok('Account has been pulled up for Crystal Minh.')],
      ask(
        'To verify your identity, may I have your zip code, phone number and email address?',
        '63449, phone is 136-472-4030',
      ),
    ];
    const answered = history('account', 'I forgot my username. I am Crystal Minh', steps);
    expect(decideNextStep(viewConversation(answered), policy)).toEqual({
      type: 'call',
      name: 'verify-identity',
      args: { customer_name: 'Crystal Minh', zip_code: '63449', phone: '136-472-4030' },
    });
    const verified = history('account', 'I forgot my username. I am Crystal Minh', [
      ...steps,
      [
        'verify-identity',
        {},
        JSON.stringify({ log: 'Identity verification in progress ...', verified: true, username: 'cminh1' }),
      ],
    ]);
    const reply = decideNextStep(viewConversation(verified), policy);
    expect(reply.type === 'reply' && reply.text).toBe(
      'I have pulled up your account and verified your identity. Your username is cminh1. (case recover_username) Is there anything else I can help you with?',
    );
  });
});
