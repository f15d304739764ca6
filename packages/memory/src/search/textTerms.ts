/// <reference path="../types/stopword.d.ts" />
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { eng } from 'stopword';

/**
 * Words that carry no topic in chat transcripts, on top of the `stopword` package's English list:
 * greetings, thanks and fillers that nearly every support conversation has.
 */
const CHAT_FILLERS = [
  'hi',
  'hello',
  'hey',
  'thanks',
  'thank',
  'ok',
  'okay',
  'yes',
  'no',
  'please',
  'sure',
  'great',
  'good',
  'nice',
  'day',
  'just',
  'like',
  'help',
  'can',
  'could',
  'would',
  'will',
  'need',
  'want',
  'get',
  'got',
  'know',
  'let',
  'today',
  'anything',
  'else',
  'm',
  're',
  've',
  'll',
  'don',
  'doesn',
  'didn',
  'isn',
  'wasn',
  'im',
  'ill',
];

/** Lowercase stop words recall, keywords and summaries ignore. */
export const STOP_WORDS: ReadonlySet<string> = new Set([...eng, ...CHAT_FILLERS]);

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];

/**
 * How recall normalises one token: lowercased, `null` (dropped) for stop words and single
 * characters (unless `stopWords: false`), and purely alphabetic words reduced to their Porter stem (the `stemmer` library), so
 * "charged", "charges" and "charge" are one term (unless `stem: false`). Recall's MiniSearch `processTerm`.
 *
 * @example
 * ```ts
 * normalizeTerm('Refunded'); // 'refund'
 * normalizeTerm('the'); // null
 * normalizeTerm('AC-99812'); // 'ac-99812'
 * ```
 */
export function normalizeTerm(term: string, options: { stem?: boolean; stopWords?: boolean } = {}): string | null {
  const lower = term.toLowerCase();
  if (lower.length < 2 || ((options.stopWords ?? true) && STOP_WORDS.has(lower))) return null;
  return (options.stem ?? true) && /^[a-z]+$/.test(lower) ? stemmer(lower) : lower;
}

/**
 * The words of `text` that carry meaning: MiniSearch's default tokenizer (Unicode word boundaries),
 * lowercased, stop words and single characters left out. Not stemmed.
 *
 * @example
 * ```ts
 * textWords('I was charged twice for order #1234!'); // ['charged', 'twice', 'order', '1234']
 * ```
 */
export function textWords(text: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    const lower = token.toLowerCase();
    if (lower.length >= 2 && !STOP_WORDS.has(lower)) out.push(lower);
  }
  return out;
}

/**
 * The terms of `text` as recall indexes them: {@link textWords}, stemmed as by {@link normalizeTerm}.
 *
 * @example
 * ```ts
 * textTerms('I was charged twice for order #1234!'); // ['charg', 'twice', 'order', '1234']
 * ```
 */
export function textTerms(text: string): string[] {
  return textWords(text).map((word) => normalizeTerm(word)!);
}

/**
 * The `count` most frequent terms of `texts` (words sharing a stem count together and are shown in
 * their most frequent form; ties: first seen first), skipping words shorter than 3 characters.
 *
 * @param texts the texts to count over
 * @param count how many terms to return at most
 * @example
 * ```ts
 * topTerms(['I was charged twice for order 1234', 'Refund for the double charge on 1234'], 3); // ['charged', '1234', 'twice']
 * ```
 */
export function topTerms(texts: readonly string[], count: number): string[] {
  const byTerm = new Map<string, { n: number; order: number; forms: Map<string, number> }>();
  for (const text of texts) {
    for (const word of textWords(text)) {
      if (word.length < 3) continue;
      const term = normalizeTerm(word)!;
      const entry = byTerm.get(term) ?? { n: 0, order: byTerm.size, forms: new Map<string, number>() };
      entry.n += 1;
      entry.forms.set(word, (entry.forms.get(word) ?? 0) + 1);
      byTerm.set(term, entry);
    }
  }
  return [...byTerm.values()]
    .sort((a, b) => b.n - a.n || a.order - b.order)
    .slice(0, count)
    .map((e) => [...e.forms.entries()].sort((a, b) => b[1] - a[1])[0]![0]);
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * The sentences of `text` (Unicode sentence boundaries through `Intl.Segmenter`), trimmed, empty ones left out.
 *
 * @example
 * ```ts
 * sentences('I was charged twice. Can you refund it?'); // ['I was charged twice.', 'Can you refund it?']
 * ```
 */
export function sentences(text: string): string[] {
  return [...segmenter.segment(text)].map((s) => s.segment.trim()).filter((s) => s !== '');
}
