// Type declarations for the two winkjs packages the desk's classifier uses (they ship none).

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
