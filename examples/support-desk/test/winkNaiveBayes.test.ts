import fc from 'fast-check';
import createNaiveBayes from 'wink-naive-bayes-text-classifier';
import { describe, expect, it } from 'vitest';

// The desk installs wink-naive-bayes-text-classifier 2.2.1 with a patch (`patches/` at the repository's
// root) that computes the same odds faster: each word's count summed over all labels once, at
// consolidation, instead of a loop over the other labels for every word of every text scored; and, as it
// learns, a label's counts looked up once per text instead of twice per word.
// These tests hold the patched library to the formula of the unpatched source, exactly.

interface Example {
  label: string;
  tokens: string[];
}

/** wink 2.2.1's `computeOdds`, as its unpatched source computes it: the other labels' counts summed in a loop. */
function unpatchedOdds(examples: readonly Example[], input: readonly string[], smoothing: number, presence: boolean): Array<[string, number]> {
  const samples = new Map<string, number>();
  const count = new Map<string, Map<string, number>>();
  const words = new Map<string, number>();
  const voc = new Set<string>();
  for (const { label, tokens } of examples) {
    samples.set(label, (samples.get(label) ?? 0) + 1);
    const counts = count.get(label) ?? new Map<string, number>();
    count.set(label, counts);
    for (const token of presence ? new Set(tokens) : tokens) {
      counts.set(token, (counts.get(token) ?? 0) + 1);
      voc.add(token);
      words.set(label, (words.get(label) ?? 0) + 1);
    }
  }
  const labels = [...samples.keys()];
  const logLikelihood = (w: string, label: string): number => {
    const clw = count.get(label)!.get(w) ?? 0;
    const denominator = words.get(label)!;
    if (smoothing > 0) return Math.log2(clw + smoothing) - Math.log2(denominator + voc.size * smoothing);
    return clw ? Math.log2(clw) - Math.log2(denominator + voc.size) : 0;
  };
  const inverseLogLikelihood = (w: string, label: string): number => {
    let clw = 0;
    let wl = 0;
    for (const other of labels) {
      if (other === label) continue;
      wl += words.get(other)!;
      clw += count.get(other)!.get(w) ?? 0;
    }
    if (smoothing > 0) return Math.log2(clw + smoothing) - Math.log2(wl + voc.size * smoothing);
    return clw ? Math.log2(clw) - Math.log2(wl + voc.size) : 0;
  };
  const known = input.filter((token) => voc.has(token));
  const odds = (label: string): number => {
    if (known.length === 0) return 0;
    let sum = 0;
    let notInLabel = 0;
    for (const other of labels) {
      sum += samples.get(other)!;
      notInLabel += other === label ? 0 : samples.get(other)!;
    }
    let lh = 0;
    let ilh = 0;
    for (const token of known) {
      lh += logLikelihood(token, label);
      ilh += lh === 0 ? 0 : inverseLogLikelihood(token, label);
    }
    if (lh !== 0) {
      lh += Math.log2(samples.get(label)!) - Math.log2(sum);
      ilh += Math.log2(notInLabel) - Math.log2(sum);
    }
    return lh - ilh;
  };
  const all = labels.map((label): [string, number] => [label, odds(label)]).sort((a, b) => b[1] - a[1]);
  return all[0]![1] ? all : [['unknown', 0]];
}

/** The patched library's odds for `input` after learning `examples`. */
function patchedOdds(examples: readonly Example[], input: readonly string[], smoothing: number, presence: boolean): Array<[string, number]> {
  const model = createNaiveBayes();
  model.defineConfig({ considerOnlyPresence: presence, smoothingFactor: smoothing });
  for (const { label, tokens } of examples) model.learn([...tokens], label);
  model.consolidate();
  return model.computeOdds([...input]);
}

const VOCABULARY = Array.from({ length: 14 }, (_, i) => `w${i}`);
// Two labels and ten distinct words at least: what wink needs to consolidate.
const BASE: Example[] = [
  { label: 'billing', tokens: VOCABULARY.slice(0, 6) },
  { label: 'orders', tokens: VOCABULARY.slice(4, 10) },
];

describe('wink-naive-bayes-text-classifier as patched', () => {
  it('gives exactly the odds of the unpatched formula, for any corpus, setting and input', () => {
    const example = fc.record({
      label: fc.constantFrom('billing', 'orders', 'account', 'returns'),
      tokens: fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 8 }),
    });
    fc.assert(
      fc.property(
        fc.array(example, { maxLength: 25 }),
        fc.array(fc.constantFrom(...VOCABULARY, 'unseen'), { maxLength: 10 }),
        fc.constantFrom(0, 0.25, 0.5, 1),
        fc.boolean(),
        (extra, input, smoothing, presence) => {
          const examples = [...BASE, ...extra];
          expect(patchedOdds(examples, input, smoothing, presence)).toEqual(unpatchedOdds(examples, input, smoothing, presence));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('scores a text on the counts of the labels other than each label (a worked example)', () => {
    const examples: Example[] = [...BASE, { label: 'account', tokens: ['w0', 'w11', 'w12'] }];
    const odds = new Map(patchedOdds(examples, ['w0', 'w12'], 0.5, false));
    // billing: w0 once and w12 never in its 6 words; among the other labels' 9 words, w0 once and w12 once;
    // 12 distinct words known; 1 of the 3 texts is billing's.
    const lh = Math.log2(1.5) - Math.log2(6 + 12 * 0.5) + (Math.log2(0.5) - Math.log2(6 + 12 * 0.5)) + (Math.log2(1) - Math.log2(3));
    const ilh = Math.log2(1.5) - Math.log2(9 + 12 * 0.5) + (Math.log2(1.5) - Math.log2(9 + 12 * 0.5)) + (Math.log2(2) - Math.log2(3));
    expect(odds.get('billing')).toBeCloseTo(lh - ilh, 12);
    expect([...odds.keys()][0]).toBe('account');
  });
});
