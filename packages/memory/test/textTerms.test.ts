import { describe, expect, it } from 'vitest';
import {
  extractiveSummary,
  normalizeTerm,
  sentences,
  TokenCounter,
  textTerms,
  textWords,
  topTerms,
} from '../src/index.js';

describe('text terms', () => {
  it('normalises terms: lowercase, stop words and fillers out, Porter stems, ids kept whole', () => {
    expect(normalizeTerm('Refunded')).toBe('refund');
    expect(normalizeTerm('the')).toBeNull();
    expect(normalizeTerm('thanks')).toBeNull();
    expect(normalizeTerm('AC-99812')).toBe('ac-99812');
    expect(normalizeTerm('charges', { stem: false })).toBe('charges');
    expect(normalizeTerm('the', { stopWords: false })).toBe('the');
    expect(textWords('I was charged twice for order #1234!')).toEqual(['charged', 'twice', 'order', '1234']);
    expect(textTerms('I was charged twice for order #1234!')).toEqual(['charg', 'twice', 'order', '1234']);
  });

  it('ranks keywords by frequency over stems and shows their most frequent form', () => {
    expect(topTerms(['I was charged twice for order 1234', 'Refund for the double charge on 1234'], 3)).toEqual([
      'charged',
      '1234',
      'twice',
    ]);
  });

  it('splits sentences on Unicode boundaries', () => {
    expect(sentences('Hi! I need my password. Can you help?')).toEqual(['Hi!', 'I need my password.', 'Can you help?']);
  });

  it('counts the documented examples', () => {
    const counter = new TokenCounter({ model: 'gpt-4.1-mini' });
    expect(counter.countText('I was charged twice')).toBe(4);
    expect(counter.countMessages([{ role: 'user', content: 'Hi' }])).toBe(8);
  });
});

describe('extractiveSummary', () => {
  it('keeps the first user message and the key sentences, in transcript order', () => {
    const summary = extractiveSummary(
      [
        { role: 'user', content: 'I was charged twice for order 1234.' },
        {
          role: 'assistant',
          agent: 'billing',
          content:
            'Hello! I see two charges on order 1234. The weather is nice today. I refunded the second charge on order 1234.',
        },
        { role: 'user', content: 'Thanks a lot.' },
      ],
      { sentences: 2 },
    );
    expect(summary).toBe(
      'User: I was charged twice for order 1234.\nbilling: I see two charges on order 1234. I refunded the second charge on order 1234.',
    );
  });

  it('cuts long summaries and gives nothing for an empty transcript', () => {
    const long = extractiveSummary([{ role: 'user', content: 'word '.repeat(500) }], { maxChars: 100 });
    expect(long.length).toBe(100);
    expect(long.endsWith('…')).toBe(true);
    expect(extractiveSummary([])).toBe('');
  });
});
