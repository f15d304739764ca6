import type { Episode } from '@baton/core';
import { sentences, textTerms } from '../search/textTerms.js';

/** Options of {@link extractiveSummary}. */
export interface ExtractiveSummaryOptions {
  /** How many key sentences follow the first user message (default 3). */
  sentences?: number;
  /** Longest summary, in characters (default 700); longer sentences are cut with "…". */
  maxChars?: number;
}

type Line = Episode['transcript'][number];

/**
 * A summary made of the transcript's own sentences, with no model: the first user message (what the
 * user came for), then the key sentences, in transcript order. A sentence's weight is the mean
 * frequency, over the whole transcript, of its terms (stop words left out), so sentences about what
 * the conversation keeps returning to win (Luhn-style frequency extraction).
 *
 * @param transcript an episode's transcript lines, in order
 * @param options `{ sentences?, maxChars? }` (defaults 3 sentences, 700 characters)
 * @returns lines `"User: …"` / `"<agent or Assistant>: …"`; `''` for an empty transcript
 * @example
 * ```ts
 * extractiveSummary([
 *   { role: 'user', content: 'I was charged twice for order 1234.' },
 *   { role: 'assistant', agent: 'billing', content: 'I see two charges on order 1234. I refunded the second charge.' },
 * ]);
 * // 'User: I was charged twice for order 1234.\nbilling: I see two charges on order 1234. I refunded the second charge.'
 * ```
 */
export function extractiveSummary(transcript: readonly Line[], options: ExtractiveSummaryOptions = {}): string {
  const want = options.sentences ?? 3;
  const maxChars = options.maxChars ?? 700;
  const firstUser = transcript.findIndex((line) => line.role === 'user');
  const frequency = new Map<string, number>();
  for (const line of transcript)
    for (const term of textTerms(line.content)) frequency.set(term, (frequency.get(term) ?? 0) + 1);

  const candidates: Array<{ line: number; order: number; text: string; weight: number }> = [];
  transcript.forEach((line, index) => {
    if (index === firstUser) return;
    for (const text of sentences(line.content)) {
      const terms = textTerms(text);
      if (terms.length < 2) continue;
      const weight = terms.reduce((sum, t) => sum + (frequency.get(t) ?? 0), 0) / terms.length;
      candidates.push({ line: index, order: candidates.length, text, weight });
    }
  });
  const chosen = candidates
    .sort((a, b) => b.weight - a.weight || a.order - b.order)
    .slice(0, want)
    .sort((a, b) => a.order - b.order);

  const parts: Array<{ line: number; text: string }> = [];
  if (firstUser !== -1) parts.push({ line: firstUser, text: transcript[firstUser]!.content.trim() });
  parts.push(...chosen);
  parts.sort((a, b) => a.line - b.line);
  const lines: string[] = [];
  let previousLine = -1;
  for (const part of parts) {
    const speaker = transcript[part.line]!;
    const who = speaker.role === 'user' ? 'User' : (speaker.agent ?? 'Assistant');
    if (part.line === previousLine) lines[lines.length - 1] += ` ${part.text}`;
    else lines.push(`${who}: ${part.text}`);
    previousLine = part.line;
  }
  return clip(lines.join('\n'), maxChars);
}

function clip(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1).trimEnd()}…`;
}
