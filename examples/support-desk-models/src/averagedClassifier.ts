import type { Classification, TextClassifier } from './textClassifier.js';

/** What a router needs of a classifier: a label for a text, with calibrated probabilities. */
export interface FlowClassifier {
  /** @returns the most probable label with its probability (0–1) and every label's, best first; `undefined` when the text says nothing it knows */
  classify(text: string): Classification | undefined;
}

/**
 * An ensemble of calibrated classifiers: each label's probability is the mean of the classifiers'
 * calibrated probabilities (a classifier that knows none of a text's words, or not the label, counts
 * 0 for it). Ties go to the label that sorts first.
 *
 * @example
 * ```ts
 * const router = new AveragedClassifier([new NaiveBayesClassifier(texts, ROUTER_CLASSIFIER), new NaiveBayesClassifier(texts)]);
 * router.classify('I was charged twice')?.label; // 'purchase_dispute'
 * ```
 */
export class AveragedClassifier implements FlowClassifier {
  readonly #models: readonly TextClassifier[];

  /** @param models at least one trained classifier */
  constructor(models: readonly TextClassifier[]) {
    this.#models = models;
  }

  /** The labels any of its classifiers can give, sorted. */
  get labels(): readonly string[] {
    return [...new Set(this.#models.flatMap((model) => model.labels))].sort();
  }

  /** @returns the label with the highest mean probability, or `undefined` when no classifier knows a word of the text */
  classify(text: string): Classification | undefined {
    const sums = new Map<string, number>();
    for (const model of this.#models) {
      for (const { label, probability } of model.classify(text)?.probabilities ?? [])
        sums.set(label, (sums.get(label) ?? 0) + probability / this.#models.length);
    }
    const probabilities = [...sums]
      .map(([label, probability]) => ({ label, probability }))
      .sort((a, b) => b.probability - a.probability || (a.label < b.label ? -1 : 1));
    const best = probabilities[0];
    return best === undefined ? undefined : { label: best.label, confidence: best.probability, probabilities };
  }
}
