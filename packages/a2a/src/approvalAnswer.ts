import type { Part } from '@a2a-js/sdk';
import type { RequestAnswer } from '@baton/handoff';
import { dataOf, textOf } from './a2aMessages.js';

const YES = /^\s*(yes|y|approve|approved|ok|okay|go ahead)\b[\s.!]*$/i;
const NO = /^\s*(no|n|reject|rejected|deny|denied)\b[\s.,:;!-]*(.*)$/is;

/**
 * Reads an approval from an A2A message's parts: a data part `{ approved: boolean, reason?: string }`,
 * or text `yes` / `approve` / `ok` (approved) or `no …` / `reject …` / `deny …` (rejected, what
 * follows being the reason the model reads). `undefined` when the message says neither.
 * @example
 * ```ts
 * import { approvalFromParts, textPart } from '@baton/a2a';
 * approvalFromParts([textPart('no, too expensive')]); // { approved: false, reason: 'too expensive' }
 * ```
 */
export function approvalFromParts(parts: readonly Part[]): RequestAnswer | undefined {
  const data = dataOf(parts);
  if (data !== undefined && typeof data.approved === 'boolean') {
    if (data.approved) return { approved: true };
    return typeof data.reason === 'string' ? { approved: false, reason: data.reason } : { approved: false };
  }
  const text = textOf(parts);
  if (YES.test(text)) return { approved: true };
  const no = NO.exec(text);
  if (no === null) return undefined;
  const reason = no[2]?.trim() ?? '';
  return reason === '' ? { approved: false } : { approved: false, reason };
}
