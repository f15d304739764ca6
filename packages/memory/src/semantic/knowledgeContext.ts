import type { ModelMessage } from '@baton/core';
import type { TokenCounter } from '../working/tokenCounter.js';
import type { KnowledgeDocument } from './knowledgeDocument.js';

/** The first line of the context message {@link knowledgeContextMessage} builds. */
export const KNOWLEDGE_HEADING = 'Knowledge base documents that may help with this message (most relevant first):';

/** A document cut shorter than this (in tokens) is left out rather than shown as a stub. */
const MIN_CUT_TOKENS = 32;

/**
 * The one `context` message that carries found documents into an agent's model input: per document
 * its rank, title and id, then its text; documents are added best first while they fit in
 * `maxTokens` (counted by `counter`), the first one that does not fit is cut to the tokens left
 * (when at least 32 are), and the rest are left out.
 *
 * @param documents found documents, best first
 * @param counter counts tokens (use working memory's `counter` to count as it does)
 * @param maxTokens the most tokens the message's text may take (heading included)
 * @returns `undefined` when there are no documents or none fits
 * @example
 * ```ts
 * knowledgeContextMessage([refundPolicy], new TokenCounter(), 1000)?.content;
 * // 'Knowledge base documents that may help …\n\n[1] Refunds (refund-policy)\nA duplicate charge is refunded …'
 * ```
 */
export function knowledgeContextMessage(
  documents: readonly KnowledgeDocument[],
  counter: TokenCounter,
  maxTokens: number,
): ModelMessage | undefined {
  let text = KNOWLEDGE_HEADING;
  let used = counter.countText(text);
  let shown = 0;
  for (const document of documents) {
    const name = document.title === '' ? document.id : `${document.title} (${document.id})`;
    const block = `\n\n[${shown + 1}] ${name}\n${document.text}`;
    const cost = counter.countText(block);
    if (used + cost <= maxTokens) {
      text += block;
      used += cost;
      shown += 1;
      continue;
    }
    const left = maxTokens - used;
    if (left >= MIN_CUT_TOKENS) {
      text += counter.truncate(block, left);
      shown += 1;
    }
    break;
  }
  if (shown === 0) return undefined;
  // Tokens of joined blocks can differ by a merge at their seams from the sum of their counts.
  return { role: 'context', content: counter.countText(text) > maxTokens ? counter.truncate(text, maxTokens) : text };
}
