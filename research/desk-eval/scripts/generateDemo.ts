/**
 * Writes `conversations/demo.jsonl`: the support desk's own demo conversations, in the JSON Lines
 * format the desk reads (`{ id, flow, subflow, turns: [{ role, text }] }`). Each conversation plays a
 * scene of `demoScenes.ts` with a made-up customer (one of the ten names the desk's world knows,
 * with random ids), walks the company's action sequence for its subflow (`abcd/kb.json`) the way an
 * agent does (asking for what each action needs, logging each console action) and ends politely.
 * Deterministic (a seeded generator), so a rerun writes the same file.
 *
 *   npx tsx research/desk-eval/scripts/generateDemo.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { ABCD_CUSTOMER_NAMES } from '@baton/support-desk-models';
import { EXTRA_SCENES, FLOW_CONTEXT, SCENES, type Scene } from './demoScenes.js';

type Turn = { role: 'customer' | 'agent' | 'action'; text: string };

/** mulberry32: a small seeded generator, so the file is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(20261123);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const digits = (n: number) =>
  Array.from({ length: n }, (_, i) => (i === 0 ? 1 + Math.floor(random() * 9) : Math.floor(random() * 10))).join('');
const accountId = () => {
  const letters = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
  const all = `${letters}0123456789`;
  const id = Array.from({ length: 10 }, () => pick(all.split(''))).join('');
  return /[A-Z]/.test(id) ? id : `${pick(letters.split(''))}${id.slice(1)}`;
};

const BRANDS = ['calvin klein', 'guess', 'michael kors', 'tommy hilfiger'];
const ITEMS = ['boots', 'jacket', 'jeans', 'shirt'];
const STREETS = ['Maple Avenue', 'Oak Street', 'Cedar Lane', 'Hillside Drive', 'Lakeview Road', 'Birch Court'];

interface Persona {
  name: string;
  accountId: string;
  orderId: string;
  username: string;
  email: string;
  zip: string;
  membership: string;
  brand: string;
  item: string;
  amount: number;
  shipping: string;
}

function persona(opening: string, subflow: string): Persona {
  const named = ABCD_CUSTOMER_NAMES.find((n) => opening.includes(n));
  const name = named ?? pick(ABCD_CUSTOMER_NAMES);
  const [first, last] = name.toLowerCase().split(' ') as [string, string];
  const username = `${first}${last[0]}${digits(3)}`;
  const item = ITEMS.includes(subflow) ? subflow : pick(ITEMS);
  return {
    name,
    accountId: accountId(),
    orderId: digits(10),
    username,
    email: random() < 0.5 ? `${username}@email.com` : `${first[0]}${last}${digits(2)}@email.com`,
    zip: digits(5),
    membership: pick(['guest', 'bronze', 'silver', 'gold']),
    brand: pick(BRANDS),
    item,
    amount: named === 'Crystal Minh' ? 40 : 15 + Math.floor(random() * 36) * 5,
    shipping: pick(['in transit', 'out for delivery', 'order received', 'delivered']),
  };
}

const GREETINGS_AGENT = [
  'Hello, thank you for contacting AcmeCorp! How can I help you today?',
  'Hi there, welcome to AcmeCorp support. What can I do for you?',
  'Good day! How may I help you?',
];
const GREETINGS_CUSTOMER = ['hi', 'Hello there', 'Hey, good morning', 'hi, anyone there?'];
const THANKS = [
  'No, that is everything. Thank you!',
  "That's all, thanks so much.",
  'Nope, you were a big help. Bye!',
  'No thanks, have a nice day.',
];

/** The conversation of one scene, walking the subflow's action sequence. */
function converse(scene: Scene, opening: string, greetFirst: boolean, sequence: readonly string[]): Turn[] {
  const p = persona(opening, scene.subflow);
  const product = `${p.brand} ${p.item}`;
  const filled = opening
    .replaceAll('{product}', scene.flow === 'single_item_query' && random() < 0.5 ? product : p.item)
    .replaceAll('{brand}', p.brand);
  const text = random() < 0.6 ? `${filled} ${pick(FLOW_CONTEXT[scene.flow] ?? [''])}`.trim() : filled;
  const turns: Turn[] = [{ role: 'agent', text: pick(GREETINGS_AGENT) }];
  const say = (role: Turn['role'], line: string) => turns.push({ role, text: line });
  if (greetFirst) {
    say('customer', pick(GREETINGS_CUSTOMER));
    say('agent', 'Hi! What can I help you with today?');
  }
  say('customer', text);
  const known = new Set<string>();
  if (text.includes(p.name)) known.add('name');
  const ask = (question: string, answer: string, gives: string[]) => {
    say('agent', question);
    say('customer', answer);
    for (const slot of gives) known.add(slot);
  };
  for (const action of sequence) {
    switch (action) {
      case 'pull-up-account':
        if (!known.has('name')) {
          ask(
            pick(['I can help with that. May I have your full name?', 'Sure thing. Could I get your full name first?']),
            pick([p.name, `It's ${p.name}.`, `My name is ${p.name}`]),
            ['name'],
          );
        }
        say('action', `Account has been pulled up for ${p.name}.`);
        break;
      case 'verify-identity':
        if (random() < 0.5)
          ask(
            'To verify your identity, may I have your account ID and order ID?',
            pick([
              `Account ID is ${p.accountId} and the order ID is ${p.orderId}`,
              `${p.accountId}, order ${p.orderId}`,
            ]),
            ['account', 'order'],
          );
        else
          ask(
            'I need to verify your identity. What are your account ID and zip code?',
            `Sure: account ${p.accountId}, zip code ${p.zip}`,
            ['account', 'zip'],
          );
        say('action', 'Identity verification in progress ...');
        break;
      case 'validate-purchase':
        if (!known.has('order') || !known.has('user')) {
          ask(
            'To validate the purchase, may I have your username, email address and order ID?',
            pick([
              `username ${p.username}, email ${p.email}, order ID ${p.orderId}`,
              `${p.email} and the order number is ${p.orderId}`,
            ]),
            ['order', 'user'],
          );
        }
        say('action', 'Purchase validation in progress ...');
        known.add('validated');
        break;
      case 'offer-refund':
        if (!known.has('validated')) {
          const answers =
            scene.subflow === 'status_service_added'
              ? [`I never signed up for it and I was charged $${p.amount}.`]
              : [`It was $${p.amount}.`, `$${p.amount}`, `They took $${p.amount} from my card.`];
          ask('How much were you charged?', pick(answers), ['amount']);
        }
        say('action', `A refund has been made for the amount of $${p.amount}.`);
        say('agent', `I have refunded $${p.amount}; you should see it within a few days.`);
        break;
      case 'shipping-status':
        ask(
          'What does the shipping status on the order say?',
          pick([`It says ${p.shipping}.`, `Status is ${p.shipping}`]),
          ['shipping'],
        );
        say('action', `Shipping status of ${p.shipping} has been noted.`);
        break;
      case 'membership':
        ask(
          'What is your membership level with us?',
          pick([`I'm a ${p.membership} member.`, `${p.membership} I think`]),
          ['membership'],
        );
        say('action', `Membership level of ${p.membership} has been noted.`);
        break;
      case 'enter-details':
        if (scene.subflow === 'recover_password') {
          ask(
            'May I have your username, and your PIN or the answer to your security question?',
            `username is ${p.username}, security answer ${pick(['Singh', 'Martinez', 'Livingston', 'Ahmed', 'Alexander'])}`,
            ['user'],
          );
          say('action', `Details of ${p.username} have been entered.`);
        } else if (scene.subflow === 'reset_2fa') {
          ask('What is the email address on your account?', pick([p.email, `It should be ${p.email}`]), ['user']);
          say('action', `Details of ${p.email} have been entered.`);
        } else
          say(
            'action',
            `Details of ${scene.flow === 'troubleshoot_site' ? 'troubleshoot' : p.accountId} have been entered.`,
          );
        break;
      case 'update-account':
        if (scene.subflow === 'manage_change_address') {
          const street = `${100 + Math.floor(random() * 8900)} ${pick(STREETS)}`;
          ask('What is your new address?', `The new one is ${street}`, ['address']);
          say('action', `Account has been updated with ${street}.`);
        } else if (scene.subflow === 'manage_change_phone') {
          const phone = `(${digits(3)}) ${digits(3)}-${digits(4)}`;
          ask('What is your new phone number?', phone, ['phone']);
          say('action', `Account has been updated with ${phone}.`);
        } else
          say(
            'action',
            `Account has been updated with ${scene.flow === 'subscription_inquiry' ? 'renew subscription' : 'remove service'}.`,
          );
        break;
      case 'record-reason':
        say('action', `A reason of ${scene.subflow.replace(/_/g, ' ')} has been recorded.`);
        break;
      case 'ask-the-oracle':
        say('action', 'Querying the system for an answer ...');
        break;
      case 'update-order':
        say(
          'action',
          `Order has been updated with ${pick(['change order', 'give credit', 'by mail', 'change address'])}.`,
        );
        break;
      case 'make-purchase':
        say('action', `A purchase of ${product} was made.`);
        break;
      case 'notify-team':
        say(
          'action',
          `The ${scene.flow === 'troubleshoot_site' ? 'website team' : 'purchasing department'} has been notified.`,
        );
        break;
      case 'subscription-status':
        say('action', 'Querying the system for subscription status ...');
        break;
      case 'make-password':
        say('action', 'A password has been generated.');
        break;
      case 'promo-code':
        say('action', 'A promo code has been created.');
        break;
      case 'send-link':
        say('action', 'A link will be sent.');
        break;
      case 'search-faq':
        say('action', 'Searching the FAQ pages ...');
        break;
      case 'select-faq':
        say('action', `FAQ answer related to ${scene.subflow} was selected.`);
        say(
          'agent',
          pick(['Our FAQ covers exactly that; here is the answer.', 'Good question! Here is what our FAQ says.']),
        );
        say('customer', pick(['Great, that helps.', 'Oh nice, thanks.', 'Ok good to know.']));
        break;
      case 'try-again':
        say('action', 'Agent is looking for solutions ...');
        say('agent', 'Could you try that once more and tell me what happens?');
        say('customer', pick(['Tried again, same problem.', 'Still not working.']));
        break;
      case 'log-out-in':
        say('action', 'Agent is looking for solutions ...');
        say('agent', 'Please log out, log back in and try again.');
        say('customer', pick(['Ok that seems to have fixed it!', 'Logged out and in, it works now.']));
        break;
      default:
        if (action.startsWith('search-')) say('action', `System Action: search ${action.slice(7)}`);
        else say('action', 'Agent is looking for solutions ...');
    }
  }
  say('agent', 'Is there anything else I can help you with?');
  say('customer', pick(THANKS));
  say('agent', 'Thank you for contacting AcmeCorp, have a great day!');
  return turns;
}

const ontology = loadOntology();
const lines: string[] = [];
let n = 0;
// The first scenes by flow, then the extra scenes (added later, so the first conversations keep their details).
const ordered = [...ontology.flows.flatMap((flow) => SCENES.filter((s) => s.flow === flow)), ...EXTRA_SCENES];
for (const scene of ordered) {
  for (let i = 0; i < (scene.count ?? 1); i += 1) {
    n += 1;
    const sequence = ontology.sequences[scene.subflow];
    if (sequence === undefined || ontology.flowOf(scene.subflow) !== scene.flow)
      throw new Error(`unknown subflow ${scene.subflow} of ${scene.flow}`);
    const turns = converse(scene, scene.openings[i % scene.openings.length]!, n % 7 === 3, sequence);
    lines.push(
      JSON.stringify({ id: `demo-${String(n).padStart(3, '0')}`, flow: scene.flow, subflow: scene.subflow, turns }),
    );
  }
}
const out = fileURLToPath(new URL('../../../examples/support-desk/conversations/demo.jsonl', import.meta.url));
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(`Wrote ${lines.length} conversations to ${out}`);
