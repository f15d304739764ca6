// Type declarations for the packages the desk's classifiers use that ship none (winkjs, ml-logistic-regression), and for
// the model class inside stdlib's incremental binary classifier, whose package declares only its accumulator.

declare module 'wink-tokenizer' {
  /** A token and its type (`word`, `number`, `punctuation`, `emoji`, `email`, …). */
  interface WinkToken {
    value: string;
    tag: string;
  }
  /** winkjs's rule-based tokenizer. */
  class Tokenizer {
    tokenize(text: string): WinkToken[];
  }
  export default Tokenizer;
}

declare module 'wink-naive-bayes-text-classifier' {
  /** winkjs's naive Bayes text classifier (see its README): learn, consolidate, then predict or computeOdds. */
  interface NaiveBayesTextClassifier {
    definePrepTasks(tasks: Array<(input: string) => string[]>): number;
    defineConfig(config: { considerOnlyPresence?: boolean; smoothingFactor?: number }): boolean;
    /** Learns a text (prepared by the prep tasks) or its tokens. */
    learn(input: string | string[], label: string): boolean;
    consolidate(): boolean;
    predict(input: string | string[]): string;
    /** Each label's log-odds (base 2) for the input, best first; `[['unknown', 0]]` when no token is known. */
    computeOdds(input: string | string[]): Array<[string, number]>;
  }
  export default function createNaiveBayes(): NaiveBayesTextClassifier;
}

declare module 'ml-logistic-regression' {
  import type { Matrix } from 'ml-matrix';
  /** mljs's one-vs-rest logistic regression (batch gradient descent); class i's classifier is trained with class i as 0. */
  export default class LogisticRegression {
    constructor(options?: { numSteps?: number; learningRate?: number });
    classifiers: Array<{ weights: Matrix }>;
    train(features: Matrix, classes: Matrix): void;
    predict(features: Matrix): number[];
  }
}

declare module '@stdlib/ml-incr-binary-classification/lib/model.js' {
  import type ndarray from '@stdlib/ndarray-ctor';
  /**
   * The binary classifier behind `@stdlib/ml-incr-binary-classification`'s accumulator (version 0.1.0, pinned):
   * stochastic gradient descent on N features, its weights kept scaled so that L2 regularisation costs one multiply.
   */
  export default class BinaryClassificationModel {
    constructor(
      features: number,
      options: {
        loss: 'hinge' | 'log' | 'modifiedHuber' | 'perceptron' | 'squaredHinge';
        lambda: number;
        learningRate: [string, ...number[]];
        intercept: boolean;
      },
    );
    /** One step on a vector of N features whose label is +1 or −1 (not checked). */
    update(x: ndarray, y: 1 | -1): this;
    /** The current coefficients, copied into one ndarray the model reuses (overwritten by the next read). */
    readonly coefficients: { data: Float64Array };
  }
}
