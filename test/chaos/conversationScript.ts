/**
 * What the chaos customer says: scripted user messages, each with a unique marker (`[u1]`, …), and
 * the answers to the questions agents ask (markers `[a1]`, …). Markers let the oracle see whether a
 * model input or a stored history holds a message twice.
 */

/** The user messages of one conversation, in order. */
export const USER_MESSAGES: readonly string[] = [
  '[u1] I was charged twice for order 1234.',
  '[u2] And where is my parcel for order 1234?',
  '[u3] Thanks, that is all.',
];

/** The question shipping asks with `request_user_input`. */
export const ADDRESS_PROMPT = 'Which delivery address should I check?';

/** The customer's answer to each question an agent asks, by prompt. */
export const ANSWERS: Readonly<Record<string, string>> = {
  [ADDRESS_PROMPT]: '[a1] 221B Baker Street, London',
};

/** Every marker in `text` (`[u1]`, `[a1]`, …), in order. */
export function markersIn(text: string): string[] {
  return text.match(/\[[ua]\d+\]/g) ?? [];
}

/** How many of the scripted user messages `history` holds (by marker), which tells the customer what to say next. */
export function scriptedMessagesSent(history: readonly { role: string; content: string }[]): number {
  const sent = new Set(history.filter((m) => m.role === 'user').flatMap((m) => markersIn(m.content)));
  return USER_MESSAGES.filter((text) => markersIn(text).every((marker) => sent.has(marker))).length;
}
