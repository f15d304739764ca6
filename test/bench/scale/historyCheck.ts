/**
 * Checks a session's stored history against the customer turns that were sent to it, in order:
 * every turn must be stored once, whole and in place — its customer message, the coordinator's
 * handoff call, the handoff's result and the specialist's answer to that message — with seqs
 * 1, 2, 3, … and no message id twice. A turn whose call failed may be missing, or finished by a
 * later call with more messages (a retried step), but never mixed with another turn. Used by the scale-out bench after workers in several
 * processes served the same sessions.
 */
import type { Message } from '@baton/core';

/** What is wrong with one session's history (empty when nothing is). */
export interface HistoryFaults {
  /** Turns sent whose messages are missing (by turn index, from 0). */
  lost: number[];
  /** Messages stored more than once (same id, or a turn's customer message twice). */
  duplicated: number;
  /** Turns whose messages are out of order or mixed with another turn's. */
  interleaved: number[];
  /** Seqs that do not run 1, 2, 3, … */
  seqGaps: number;
  /** Messages beyond the four of each turn sent (a failed turn that was finished later may hold more, and counts none here). */
  extra: number;
}

const TURN_ROLES = ['user', 'assistant', 'tool', 'assistant'] as const;

/**
 * Compares `messages` (one branch, in seq order) with the texts sent as turns.
 * @param sent the customer texts in the order they were sent
 * @param answerTo the text the specialist answers a customer text with
 */
export function checkHistory(
  messages: readonly Message[],
  sent: readonly string[],
  answerTo: (text: string) => string,
  failed: ReadonlySet<number> = new Set(),
): HistoryFaults {
  const faults: HistoryFaults = {
    lost: [],
    duplicated: 0,
    interleaved: [],
    seqGaps: 0,
    extra: failed.size > 0 ? 0 : Math.max(0, messages.length - sent.length * 4),
  };
  const ids = new Set<string>();
  messages.forEach((message, index) => {
    if (message.seq !== index + 1) faults.seqGaps += 1;
    if (ids.has(message.id)) faults.duplicated += 1;
    ids.add(message.id);
  });
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => m.content);
  faults.duplicated += userTexts.length - new Set(userTexts).size;
  const present = sent.filter((text) => userTexts.includes(text));
  sent.forEach((text, turn) => {
    const start = messages.findIndex((m) => m.role === 'user' && m.content === text);
    if (start < 0) {
      faults.lost.push(turn);
      return;
    }
    const inOrder = userTexts.indexOf(text) === present.indexOf(text);
    if (
      !inOrder ||
      !(failed.has(turn)
        ? recovered(messages, start, text, answerTo)
        : whole(messages.slice(start, start + TURN_ROLES.length), text, answerTo))
    ) {
      faults.interleaved.push(turn);
    }
  });
  return faults;
}

/** A turn that ran once without a failure: its four messages, in place. */
function whole(group: readonly Message[], text: string, answerTo: (text: string) => string): boolean {
  return (
    group.length === TURN_ROLES.length &&
    group.every((m, i) => m.role === TURN_ROLES[i]) &&
    group[1]?.toolCalls?.[0]?.id === group[2]?.toolCallId &&
    group[3]?.content === answerTo(text)
  );
}

/**
 * A turn whose call failed (the store refused a write) and that the next call finished: up to the
 * next customer message, every tool call answered exactly once and no answer to another customer
 * message; when it reached the answer, the answer is to this message.
 */
function recovered(
  messages: readonly Message[],
  start: number,
  text: string,
  answerTo: (text: string) => string,
): boolean {
  let end = messages.findIndex((m, i) => i > start && m.role === 'user');
  if (end < 0) end = messages.length;
  const segment = messages.slice(start + 1, end);
  const calls = segment.flatMap((m) => m.toolCalls?.map((c) => c.id) ?? []);
  const results = segment.flatMap((m) => (m.role === 'tool' && m.toolCallId !== undefined ? [m.toolCallId] : []));
  const answers = segment
    .filter((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) === 0)
    .map((m) => m.content);
  return (
    new Set(results).size === results.length &&
    calls.every((id) => results.includes(id)) &&
    answers.every((a) => a === answerTo(text))
  );
}

/** Whether `faults` found nothing wrong. */
export function isClean(faults: HistoryFaults): boolean {
  return (
    faults.lost.length === 0 &&
    faults.duplicated === 0 &&
    faults.interleaved.length === 0 &&
    faults.seqGaps === 0 &&
    faults.extra === 0
  );
}
