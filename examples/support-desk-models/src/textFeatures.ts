import { stemmer } from 'stemmer';
import Tokenizer from 'wink-tokenizer';

/** The lengths of the character n-grams taken inside each word, e.g. `{ min: 3, max: 5 }`. */
export interface CharNgramRange {
  min: number;
  max: number;
}

// Words that say nothing about what a customer needs: greetings, politeness, function words.
const STOP_WORDS = new Set(
  (
    'a about am an and any are as at be been but by can could did do does doing for from get got had has have hello help hey hi ' +
    'how i if im in is it its just let me morning my need no not of oh ok okay on or please question quick so some ' +
    'thank thanks that the there this to today too um up us want was we well what when where which who why will with would ' +
    'yes you your afternoon evening good day dear sir madam hope hiya greetings wondering wonder like there hii hiii hellooo'
  ).split(' '),
);

const tokenizer = new Tokenizer();

/** Texts whose words and features are remembered ({@link readingOf}): about what a desk's training and a replay's turns read again. */
const READINGS_CACHE_TEXTS = 5_000;

/** What is remembered of a text: its words, and its features once asked for. */
interface Reading {
  words: readonly string[];
  features?: readonly string[];
}
const readings = new Map<string, Reading>();

/**
 * A text's reading: its words (wink-tokenizer's word tokens of the lowercased text), and what
 * {@link textFeatures} made of them. Remembered for the last
 * {@link READINGS_CACHE_TEXTS} texts (then forgotten all at once): the router's two classifiers, the case
 * classifiers and the flow classifier read the same texts, and each model call reads the conversation so far.
 * Remembering the features also hands the classifiers the same feature strings again, which winkjs's
 * object-keyed counts look up faster than new strings of the same characters.
 */
function readingOf(text: string): Reading {
  let reading = readings.get(text);
  if (reading === undefined) {
    const words = tokenizer
      .tokenize(text.toLowerCase())
      .filter((token) => token.tag === 'word')
      .map((token) => token.value);
    if (readings.size >= READINGS_CACHE_TEXTS) readings.clear();
    reading = { words };
    readings.set(text, reading);
  }
  return reading;
}

/**
 * Forgets the words, features and stems remembered for the texts classified so far (at most {@link READINGS_CACHE_TEXTS}
 * texts and {@link STEM_CACHE_WORDS} words; a benchmark calls it to time a training as a new process runs it).
 * @example
 * ```ts
 * forgetTextFeatures();
 * createOfflineModels(conversations, ontology); // timed as a new process would train
 * ```
 */
export function forgetTextFeatures(): void {
  readings.clear();
  stemCache.clear();
  gramCache.clear();
}

/** Words whose Porter stem, and whose character n-grams of each range, are remembered ({@link stem}, {@link characterNgrams}). */
const STEM_CACHE_WORDS = 50_000;
const stemCache = new Map<string, string>();
/** Each range's words' character n-grams (`'3-5'` → word → n-grams). */
const gramCache = new Map<string, Map<string, readonly string[]>>();

/** The `stemmer` package's Porter stem of a word, remembered for the last {@link STEM_CACHE_WORDS} words (a vocabulary repeats). */
function stem(word: string): string {
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    stemmed = stemmer(word);
    if (stemCache.size >= STEM_CACHE_WORDS) stemCache.clear();
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

/**
 * The features a classifier sees in a text: the stemmed content words (wink-tokenizer's word tokens,
 * lowercased, Porter-stemmed; greetings and function words dropped) and every pair of adjacent words
 * (`charg_twice`), so that "charged twice" counts apart from "charged" and "twice".
 *
 * @returns the features, in order; `[]` for a text without a content word (a bare greeting)
 * @example
 * ```ts
 * textFeatures('Hi, I forgot my password!'); // ['forgot', 'password', 'i_forgot', 'forgot_my', 'my_password']
 * ```
 */
export function textFeatures(text: string): string[] {
  const reading = readingOf(text);
  reading.features ??= featuresOf(reading.words);
  return [...reading.features];
}

/** {@link textFeatures} of a text's words. */
function featuresOf(words: readonly string[]): string[] {
  const content = words.filter((word) => word.length > 1 && !STOP_WORDS.has(word));
  if (content.length === 0) return [];
  const features = content.map(stem);
  for (let i = 0; i + 1 < words.length; i += 1) {
    if (STOP_WORDS.has(words[i]!) && STOP_WORDS.has(words[i + 1]!)) continue;
    features.push(`${stem(words[i]!)}_${stem(words[i + 1]!)}`);
  }
  return features;
}

/**
 * The character n-grams of a text's words (wink-tokenizer's word tokens, lowercased), each word padded
 * with a space on both sides so that n-grams at its start and end differ from those inside (as
 * scikit-learn's `char_wb` analyzer does): a misspelled or inflected word ("histry", "refunded") still
 * shares most of its n-grams with the word it stands for. Each n-gram is prefixed with `#`.
 *
 * @param range the n-gram lengths, e.g. `{ min: 3, max: 5 }`
 * @returns the n-grams, in order; `[]` for a text without a content word (as {@link textFeatures})
 * @example
 * ```ts
 * characterNgrams('my bill', { min: 3, max: 3 }); // ['# my', '#my ', '# bi', '#bil', '#ill', '#ll ']
 * ```
 */
export function characterNgrams(text: string, range: CharNgramRange): string[] {
  const { words } = readingOf(text);
  if (!words.some((word) => word.length > 1 && !STOP_WORDS.has(word))) return [];
  const key = `${range.min}-${range.max}`;
  let byWord = gramCache.get(key);
  if (byWord === undefined) {
    byWord = new Map();
    gramCache.set(key, byWord);
  }
  const grams: string[] = [];
  for (const word of words) {
    let ofWord = byWord.get(word);
    if (ofWord === undefined) {
      const padded = ` ${word} `;
      const made: string[] = [];
      for (let n = range.min; n <= range.max; n += 1)
        for (let i = 0; i + n <= padded.length; i += 1) made.push(`#${padded.slice(i, i + n)}`);
      if (byWord.size >= STEM_CACHE_WORDS) byWord.clear();
      byWord.set(word, made);
      ofWord = made;
    }
    for (const gram of ofWord) grams.push(gram);
  }
  return grams;
}

/** Whether a text says anything a classifier can use (a content word), unlike "hi" or "hello there". */
export function hasContent(text: string): boolean {
  return textFeatures(text).length > 0;
}
