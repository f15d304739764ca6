import { REQUEST_USER_INPUT } from '@baton/handoff';
import { type ConversationView, slotsAskedBy, type ViewedCall } from './conversationView.js';
import { GUIDELINE_AMOUNTS, guidelineEntry } from './guidelineValues.js';
import { extractSlots, type SlotValues } from './slotExtraction.js';

/** The next thing a specialist does: call a console action, ask the customer, or reply. */
export type PolicyDecision =
  | { type: 'call'; name: string; args: Record<string, string> }
  | { type: 'ask'; prompt: string }
  | { type: 'reply'; text: string }
  | { type: 'end'; reason: string };

/** The phrase a specialist names its case with (`case refund_initiate`), in its replies and its `end_conversation` reason. */
export function caseLabel(subflow: string): string {
  return `case ${subflow}`;
}

const CLOSING =
  /\b(thanks?|thank you|thx|ty|bye|goodbye|that'?s (all|it)|that is (all|it)|nothing else|no more|have a (good|great|nice))\b/i;

/**
 * Whether a customer's message closes the conversation ("Thanks, that's all!", "bye"), not a new question.
 * @example
 * ```ts
 * isClosing('No, that is all. Thank you!'); // true
 * isClosing('Thanks! Can you also change my address?'); // false
 * ```
 */
export function isClosing(text: string): boolean {
  return CLOSING.test(text) && !text.includes('?');
}

/** What the policy knows about the case: who it is, the recognised subflow, its flow, its action sequence (kb.json). */
export interface PolicyCase {
  agent: string;
  flow: string;
  subflow: string;
  sequence: readonly string[];
  /** Each action's ABCD slots (ontology.json). */
  slotsOf: (action: string) => readonly string[];
}

/** Actions that move money or goods: never run twice in a conversation, even when the case's order would call for it. */
const ONCE_ONLY: ReadonlySet<string> = new Set(['offer-refund', 'make-purchase']);

/** How often an action is attempted, and how often its missing slots are asked for, before the policy moves on. */
const MAX_ATTEMPTS = 2;
const MAX_QUESTIONS = 2;
/** However well the customer answers, an action's details are asked for at most this often. */
const MAX_QUESTIONS_IN_ALL = 6;
/** Pulling up the account comes first in every guideline that has it ("All chats in this flow start by asking … [Pull up Account]"): asked for longer. */
const MAX_ACCOUNT_QUESTIONS = 4;

const TEAM_BY_FLOW: Record<string, string> = {
  troubleshoot_site: 'website team',
  purchase_dispute: 'purchasing department',
};

/**
 * The customer slots an action cannot run without, as ABCD's agents ask for them, and the question
 * to ask when some are missing. `undefined` when the action needs nothing from the customer.
 */
function requirement(
  action: string,
  subflow: string,
  known: SlotValues,
): { missing: boolean; prompt: string } | undefined {
  const has = (slot: string) => known[slot] !== undefined;
  switch (action) {
    case 'pull-up-account':
      return {
        missing: !has('customer_name') && !has('account_id'),
        prompt: 'May I have your full name or account ID?',
      };
    case 'verify-identity': {
      const ids = ['account_id', 'order_id', 'zip_code', 'phone', 'email'].filter(has).length;
      // Recovering a username, the guideline asks for the name, zip code, phone number and email ("3 out of 4").
      const asks: ReadonlyArray<readonly [string, string]> =
        subflow === 'recover_username'
          ? [
              ['zip_code', 'zip code'],
              ['phone', 'phone number'],
              ['email', 'email address'],
            ]
          : [
              ['account_id', 'account ID'],
              ['order_id', 'order ID'],
            ];
      const wanted = [
        !has('customer_name') && 'full name',
        ...asks.filter(([slot]) => !has(slot)).map(([, words]) => words),
      ].filter(Boolean);
      return {
        missing: !has('customer_name') || ids < 2,
        prompt: `To verify your identity, may I have your ${list(wanted as string[])}?`,
      };
    }
    case 'validate-purchase': {
      const wanted = [
        !has('username') && !has('email') && 'username',
        !has('email') && !has('username') && 'email address',
        !has('order_id') && 'order ID',
      ].filter(Boolean);
      return {
        missing: !has('order_id') || (!has('username') && !has('email')),
        prompt: `To validate the purchase, may I have your ${list(wanted as string[])}?`,
      };
    }
    case 'offer-refund':
      return { missing: !has('amount'), prompt: 'How much were you charged (the amount in dollars)?' };
    case 'shipping-status':
      return { missing: !has('shipping_option'), prompt: 'What does the shipping status of your order say?' };
    case 'membership':
      return {
        missing: !has('membership_level'),
        prompt: 'What is your membership level (guest, bronze, silver or gold)?',
      };
    case 'enter-details':
      if (subflow === 'recover_password') {
        return {
          missing: !has('username') || (!has('pin_number') && !has('security_answer')),
          prompt: 'May I have your username, and your PIN or the answer to your security question?',
        };
      }
      if (subflow === 'reset_2fa')
        return { missing: !has('email'), prompt: 'What is the email address on your account?' };
      return undefined;
    case 'update-account':
      if (subflow === 'manage_change_address')
        return { missing: !has('street_address'), prompt: 'What is your new address?' };
      if (subflow === 'manage_change_phone')
        return { missing: !has('phone'), prompt: 'What is your new phone number?' };
      return undefined;
    default:
      return undefined;
  }
}

function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? 'details') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** Facts earlier tool results gave (an order's amount, a subscription's amount due). */
function factsFrom(calls: readonly ViewedCall[]): SlotValues {
  const facts: SlotValues = {};
  for (const call of calls) {
    if (call.failed || call.result === undefined || !call.result.startsWith('{')) continue;
    try {
      const result = JSON.parse(call.result) as Record<string, unknown>;
      if (typeof result.amount === 'number') facts.amount = String(result.amount);
      if (typeof result.dueAmount === 'number') facts.amount ??= String(result.dueAmount);
    } catch {
      // a result that is not JSON holds no facts
    }
  }
  return facts;
}

function argumentsFor(
  action: string,
  policy: PolicyCase,
  known: SlotValues,
  customerText: string,
): Record<string, string> {
  const defaults: SlotValues = {
    ...guidelineEntry(policy.subflow, action, customerText),
    company_team: TEAM_BY_FLOW[policy.flow] ?? 'manager',
    [policy.flow]: policy.subflow,
    details_slotval: policy.flow === 'troubleshoot_site' ? 'troubleshoot' : undefined,
  };
  const args: Record<string, string> = {};
  for (const slot of policy.slotsOf(action)) {
    // The name identifies the customer; it is no reason, detail or change to record.
    if (slot === 'customer_name' && action !== 'pull-up-account' && action !== 'verify-identity') continue;
    const value = known[slot] ?? defaults[slot];
    if (value !== undefined) args[slot] = value;
  }
  return args;
}

const DONE_PHRASES: Record<string, (result: Record<string, unknown>) => string> = {
  'pull-up-account': () => 'pulled up your account',
  'verify-identity': () => 'verified your identity',
  'validate-purchase': () => 'validated your purchase',
  'offer-refund': (r) => `refunded $${r.amount}`,
  'make-password': (r) => `generated a new password (${r.password})`,
  'promo-code': (r) => `created the promo code ${r.promoCode}`,
  'update-order': () => 'updated your order',
  'update-account': () => 'updated your account',
  'send-link': () => 'sent you a link by email',
  'notify-team': () => 'notified the team',
  'make-purchase': () => 'placed the order',
  'select-faq': () => 'found the answer in our FAQ',
  'subscription-status': (r) => `checked your subscription (${r.status}, $${r.dueAmount} due ${r.dueDate})`,
};

const FAILED_PHRASES: Record<string, string> = {
  'pull-up-account': 'pulling up your account',
  'verify-identity': 'verifying your identity',
  'validate-purchase': 'validating your purchase',
  'offer-refund': 'the refund',
  'update-order': 'the change to your order',
  'update-account': 'the change to your account',
};

function finalReply(mine: readonly ViewedCall[], subflow: string): string {
  const done: string[] = [];
  const failed: string[] = [];
  for (const call of mine) {
    if (call.name === REQUEST_USER_INPUT || call.result === undefined) continue;
    if (call.failed) {
      if (!mine.some((other) => other.name === call.name && !other.failed)) failed.push(call.name);
      continue;
    }
    let result: Record<string, unknown> = {};
    try {
      result = JSON.parse(call.result) as Record<string, unknown>;
    } catch {
      // not JSON: no details
    }
    const phrase = DONE_PHRASES[call.name]?.(result);
    if (phrase !== undefined && !done.includes(phrase)) done.push(phrase);
  }
  const did = done.length > 0 ? `I have ${list(done)}.` : 'I have looked into it.';
  // Recovering a username ends by telling it (guidelines.json, Account Access / Recover Username).
  const username = subflow === 'recover_username' ? usernameIn(mine) : undefined;
  const told = username === undefined ? '' : ` Your username is ${username}.`;
  const couldNot =
    failed.length > 0
      ? ` I could not complete ${list([...new Set(failed)].map((name) => FAILED_PHRASES[name] ?? name.replace(/-/g, ' ')))}.`
      : '';
  return `${did}${told}${couldNot} (${caseLabel(subflow)}) Is there anything else I can help you with?`;
}

/** The username a successful identity verification showed, if any. */
function usernameIn(mine: readonly ViewedCall[]): string | undefined {
  for (const call of mine) {
    if (call.name !== 'verify-identity' || call.failed || call.result === undefined) continue;
    try {
      const { username } = JSON.parse(call.result) as { username?: unknown };
      if (typeof username === 'string') return username;
    } catch {
      // not JSON: no username
    }
  }
  return undefined;
}

/**
 * Decides a specialist's next step by walking kb.json's action sequence for the recognised subflow:
 * the first action not yet done runs when the customer gave its slots, otherwise the customer is
 * asked for them (`request_user_input`); an action whose slots were asked for twice in vain is tried
 * once with what the customer gave; an action that failed twice (or once, so tried) is given up; when the sequence is through, the specialist replies saying what it did
 * and naming the case ({@link caseLabel}); when the customer then closes ({@link isClosing}), it ends
 * the conversation (`end_conversation`).
 *
 * @returns the decision; it depends only on `view` and `policy`, so replays are deterministic
 */
export function decideNextStep(view: ConversationView, policy: PolicyCase): PolicyDecision {
  const mine = view.calls.filter((call) => call.agent === policy.agent);
  // Facts from tool results (an order's amount) only fill a refund's amount; other slots come from the customer.
  const facts = factsFrom(mine);
  const known: SlotValues = { ...view.slots };
  const refundKnown: SlotValues = { ...facts, ...view.slots };
  const isQuestionAbout = (call: ViewedCall, action: string) =>
    call.name === REQUEST_USER_INPUT && promptAction(String(call.args.prompt ?? ''), policy) === action;
  // The guideline's amount, once the customer was asked and did not say.
  const standard = GUIDELINE_AMOUNTS[policy.subflow];
  if (
    refundKnown.amount === undefined &&
    standard !== undefined &&
    mine.some((call) => isQuestionAbout(call, 'offer-refund') && call.result !== undefined)
  )
    refundKnown.amount = standard;
  // Progress is the guideline's sequence matched in order by the actions that ran: an action that ran
  // before an earlier step of the case (the case was re-decided, or a detail came late) runs again.
  const ran = mine
    .filter((call) => !call.failed && call.result !== undefined && call.name !== REQUEST_USER_INPUT)
    .map((call) => call.name);
  let position = 0;
  for (const action of policy.sequence) {
    const at = ran.indexOf(action, position);
    if (at >= 0) {
      position = at + 1;
      continue;
    }
    // Money moves once: a refund (or purchase) already made is not made again out of order.
    if (ONCE_ONLY.has(action) && ran.includes(action)) continue;
    const attempts = mine.filter((call) => call.name === action);
    const failures = attempts.filter((call) => call.failed);
    if (failures.length >= MAX_ATTEMPTS || attempts.some((call) => call.result?.includes('rejected'))) continue;
    const slots = action === 'offer-refund' ? refundKnown : known;
    const needs = requirement(action, policy.subflow, slots);
    if (needs !== undefined) {
      const questions = mine.filter((call) => isQuestionAbout(call, action));
      // A question is asked in vain when its answer held none of what it asked for; a customer who gives one detail per answer is asked on.
      const vain = questions.filter((call) => !answered(call)).length;
      const limit = action === 'pull-up-account' ? MAX_ACCOUNT_QUESTIONS : MAX_QUESTIONS;
      const lastFailure = failures.at(-1);
      const askedSinceFailure =
        lastFailure !== undefined &&
        mine.slice(mine.indexOf(lastFailure) + 1).some((call) => isQuestionAbout(call, action));
      const mustAsk = needs.missing || (lastFailure !== undefined && !askedSinceFailure);
      if (mustAsk && vain < limit && questions.length < MAX_QUESTIONS_IN_ALL)
        return { type: 'ask', prompt: needs.prompt };
      // Asked in vain: as a human agent would, it tries the action once with what it has (the console may accept it).
      if (needs.missing && failures.length > 0) continue;
    }
    return { type: 'call', name: action, args: argumentsFor(action, policy, slots, view.customerTexts.join('\n')) };
  }
  // The job is done and said: when the customer's next words close the conversation, the specialist closes it.
  const replied = view.repliedAt.get(policy.agent);
  if (replied !== undefined && replied < view.customerTexts.length) {
    if (isClosing(view.customerTexts.at(-1) ?? ''))
      return { type: 'end', reason: `${caseLabel(policy.subflow)}: resolved, the customer said goodbye` };
    return {
      type: 'reply',
      text: `You are welcome! Is there anything else I can help you with? (${caseLabel(policy.subflow)})`,
    };
  }
  return { type: 'reply', text: finalReply(mine, policy.subflow) };
}

/** Whether the customer's answer to a question held any of the details it asked for. */
function answered(question: ViewedCall): boolean {
  const asked = slotsAskedBy(String(question.args.prompt ?? ''));
  const found = extractSlots(question.result ?? '', asked);
  return asked.some((slot) => found[slot] !== undefined);
}

/** The action a question of this policy was about: each action's question starts its own way. */
function promptAction(prompt: string, policy: PolicyCase): string | undefined {
  const head = prompt.slice(0, 20);
  return policy.sequence.find((action) => requirement(action, policy.subflow, {})?.prompt.slice(0, 20) === head);
}
