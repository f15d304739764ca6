/** Types for the `stopword` package (it ships none): the lists used here. */
declare module 'stopword' {
  /** English stop words (lowercase). */
  export const eng: readonly string[];
  /** `tokens` without the words in `stopwords` (default English). */
  export function removeStopwords(tokens: readonly string[], stopwords?: readonly string[]): string[];
}
