// Type declarations for the packages the desk's classifiers use that ship none (winkjs, ml-logistic-regression).

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
