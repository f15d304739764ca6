/** Slot values found in text, by ABCD slot name (`customer_name`, `account_id`, `order_id`, …). */
export type SlotValues = Partial<Record<string, string>>;

/** The ten names ABCD's customers are role-played under (ontology.json, `values.enumerable.customer_name`). */
export const ABCD_CUSTOMER_NAMES: readonly string[] = [
  'Alessandro Phoenix',
  'Joyce Wu',
  'Albert Sanders',
  'David Williams',
  'Sanya Afzal',
  'Crystal Minh',
  'Chloe Zhang',
  'Rodriguez Domingo',
  'Joseph Banter',
  'Norman Bouchard',
];
const BRANDS = ['calvin klein', 'guess', 'michael kors', 'tommy hilfiger'];
const ITEMS = ['boots', 'jacket', 'jeans', 'shirt'];

const PATTERNS: Array<[slot: string, pattern: RegExp]> = [
  ['email', /\b[\w.+-]+@[\w-]+\.[\w.]+\b/],
  ['order_id', /\b\d{10}\b/],
  ['phone', /\(\d{3}\)\s?\d{3}[-. ]\d{4}|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b/],
  ['amount', /\$\s?(\d+(?:\.\d{1,2})?)|\b(\d+(?:\.\d{1,2})?)\s?(?:\$(?!\w)|dollars?\b|bucks\b|usd\b)/i],
  [
    'full_address',
    /\b\d{1,5}\s+[A-Za-z][A-Za-z ]+?\s(?:Ave|Avenue|St|Street|Rd|Road|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct)\b\.?,?\s*[A-Za-z ]*,?\s*[A-Z]{2}\s+\d{5}/,
  ],
  [
    'street_address',
    /\b\d{1,5}\s+[A-Za-z][A-Za-z ]+?\s(?:Ave|Avenue|St|Street|Rd|Road|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct)\b/,
  ],
  ['zip_code', /\b\d{5}\b/],
];

const ONE_OF: Array<[slot: string, values: readonly string[]]> = [
  ['membership_level', ['guest', 'bronze', 'silver', 'gold']],
  ['shipping_option', ['in transit', 'out for delivery', 'order received', 'delivered']],
  ['payment_method', ['credit card', 'debit card', 'paypal']],
  ['security_answer', ['Alexander', 'Martinez', 'Livingston', 'Singh', 'Ahmed']],
];
/** {@link ONE_OF}'s values with the whole-word pattern each is found by (in lowercased text). */
const ONE_OF_PATTERNS = ONE_OF.map(
  ([slot, values]) =>
    [slot, values.map((value) => [value, new RegExp(`\\b${value.toLowerCase()}\\b`)] as const)] as const,
);
/** {@link ITEMS} with the pattern each is found by, singular or plural (in lowercased text). */
const ITEM_PATTERNS = ITEMS.map((item) => [item, new RegExp(`\\b${item.replace(/s$/, '')}s?\\b`)] as const);

/**
 * Finds ABCD slot values in a customer's text: names (ABCD's ten customers), account ids (10 letters
 * and digits), order ids (10 digits), usernames, emails, zip codes, phone numbers (`(555) 123-4567`,
 * `555-123-4567`, `555 123 4567`), addresses, dollar amounts (`$40`, `40$`, `40 dollars`), membership
 * levels, shipping statuses, payment methods and products.
 *
 * @param asked slots the customer was just asked for: a bare number then counts as a PIN when a PIN
 *   was asked for, as an amount when an amount was (a message holding one number of up to four
 *   digits), a bare word as a username when a username was
 * @returns the values found (a new object each call; the last {@link SLOTS_CACHE_TEXTS} texts' are remembered); a later
 *   call's values should win over an earlier one's
 * @example
 * ```ts
 * extractSlots('I am David Williams, account 1VGSVKMH3K'); // { customer_name: 'David Williams', account_id: '1VGSVKMH3K' }
 * ```
 */
export function extractSlots(text: string, asked: readonly string[] = []): SlotValues {
  const key = asked.length === 0 ? text : `${asked.join(' ')}\u0000${text}`;
  let found = slotsCache.get(key);
  if (found === undefined) {
    found = findSlots(text, asked);
    if (slotsCache.size >= SLOTS_CACHE_TEXTS) slotsCache.clear();
    slotsCache.set(key, found);
  }
  return { ...found };
}

/** Texts whose slots are remembered ({@link extractSlots}): a model reads the whole conversation so far at every call. */
const SLOTS_CACHE_TEXTS = 5_000;
const slotsCache = new Map<string, SlotValues>();

/** {@link extractSlots} without its memory. */
function findSlots(text: string, asked: readonly string[]): SlotValues {
  const found: SlotValues = {};
  const lower = text.toLowerCase();
  for (const name of ABCD_CUSTOMER_NAMES) if (lower.includes(name.toLowerCase())) found.customer_name = name;
  const introduced = /\bmy name is ([A-Z][a-z]+ [A-Z][a-z]+)/.exec(text);
  if (found.customer_name === undefined && introduced) found.customer_name = introduced[1]!;
  for (const [slot, pattern] of PATTERNS) {
    const match = pattern.exec(text);
    if (match) found[slot] = (match[1] ?? match[2] ?? match[0]).trim();
  }
  const withoutEmail = found.email ? text.replace(found.email, ' ') : text;
  const account = withoutEmail
    .match(/\b[A-Za-z0-9]{10}\b/g)
    ?.find((token) => /[A-Z]/.test(token) && token === token.toUpperCase() && !/^\d+$/.test(token));
  if (account) found.account_id = account;
  const username = withoutEmail.match(/\b[a-z]+\d{1,7}\b/g)?.find((token) => !/^\d/.test(token));
  if (username) found.username = username;
  for (const [slot, values] of ONE_OF_PATTERNS) {
    const value = values.find(([, pattern]) => pattern.test(lower))?.[0];
    if (value) found[slot] = value;
  }
  const brand = BRANDS.find((b) => lower.includes(b));
  const item = ITEM_PATTERNS.find(([, pattern]) => pattern.test(lower))?.[0];
  if (item) found.product = brand ? `${brand} ${item}` : item;
  if (asked.includes('pin_number')) {
    const pin = /\b\d{3,6}\b/.exec(text);
    if (pin) {
      found.pin_number = pin[0];
      if (found.zip_code === pin[0]) delete found.zip_code;
    }
  }
  if (asked.includes('amount') && found.amount === undefined) {
    // A bare number answering "how much": not a zip code, an order id or a phone number.
    const bare = /^\D*?(\d{1,4}(?:\.\d{1,2})?)\D*$/.exec(text);
    if (bare) found.amount = bare[1]!;
  }
  if (asked.includes('username') && found.username === undefined) {
    const word = /^\s*(?:username:?\s*|it'?s\s+)?([a-z][a-z0-9._]{3,})\s*\.?\s*$/i.exec(text);
    if (word) found.username = word[1]!;
  }
  return found;
}
