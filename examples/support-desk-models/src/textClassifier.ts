import {
  checkTrainable,
  DEFAULT_NAIVE_BAYES,
  linearSvm,
  logisticRegression,
  naiveBayes,
  type Scorer,
  SVM_EPOCHS,
  SVM_LAMBDA,
} from './learners.js';
import { type CharNgramRange, characterNgrams, hasContent, textFeatures } from './textFeatures.js';

/** A training example: a text and its label (a flow, a subflow). */
export interface LabelledText {
  id: string;
  text: string;
  label: string;
  /**
   * Texts of one group (e.g. parts of one conversation) are held out together by the calibration's
   * cross-validation, so that it never scores a text with a model that learned its sibling (default:
   * each text is its own group).
   */
  group?: string;
  /**
   * `false`: a text that is not a conversation's (e.g. a written guideline): always learned, also by the
   * calibration's folds, but never held out and scored to fit the calibration, which must measure the
   * conversations the classifier will read (default `true`).
   */
  calibrate?: boolean;
}

/** A classification: the winning label, its calibrated probability (0–1), and every label's probability, best first. */
export interface Classification {
  label: string;
  /** The calibrated probability of `label`: among texts classified with confidence ≈ p, about p are right. */
  confidence: number;
  probabilities: Array<{ label: string; probability: number }>;
}

/** Options of {@link NaiveBayesClassifier}, {@link LogisticRegressionClassifier} and {@link LinearSvmClassifier}. */
export interface NaiveBayesOptions {
  /** Only these labels are learned (default: all). */
  labels?: readonly string[];
  /**
   * Folds of the internal cross-validation the calibration is fitted on (default 3; 0 or 1: no calibration, temperature
   * 1). A fold's model is trained only while fewer than `calibrationTexts` held-out texts have been scored: with many
   * texts, one fold is enough.
   */
  calibrationFolds?: number;
  /**
   * About how many held-out texts the calibration scores (default {@link CALIBRATION_TEXTS}, 400). Scoring a
   * text costs naive Bayes labels × features, so a classifier of many labels fits its one number on fewer.
   */
  calibrationTexts?: number;
  /** Character n-grams added to the word features ({@link characterNgrams}; default none). */
  charNgrams?: CharNgramRange;
  /** Naive Bayes' additive smoothing (default 0.5). */
  smoothing?: number;
  /** Naive Bayes counts each feature once per text (binarized, default `true`) or as often as it occurs (`false`). */
  presence?: boolean;
  /** The linear SVM's regularisation λ (Pegasos' λ: the objective is λ/2·‖w‖² + the mean hinge loss; default {@link SVM_LAMBDA}). */
  lambda?: number;
  /** How many times the linear SVM goes over its training texts, each time in a seeded shuffled order (default {@link SVM_EPOCHS}). */
  epochs?: number;
}

function softmax(scores: readonly number[], temperature: number): number[] {
  const scaled = scores.map((score) => score / temperature);
  const top = Math.max(...scaled);
  const exps = scaled.map((score) => Math.exp(score - top));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

/** `log softmax(scores / temperature)[index]`, without the arrays {@link softmax} makes (the temperature search calls it often). */
function logSoftmaxAt(scores: readonly number[], temperature: number, index: number): number {
  let top = Number.NEGATIVE_INFINITY;
  for (const score of scores) top = Math.max(top, score / temperature);
  let sum = 0;
  for (const score of scores) sum += Math.exp(score / temperature - top);
  return scores[index]! / temperature - top - Math.log(sum);
}

/**
 * Fits the temperature of temperature scaling (Guo et al., "On Calibration of Modern Neural
 * Networks", ICML 2017): the T that minimises the negative log-likelihood of the true labels under
 * softmax(scores / T), searched on a log-spaced grid from 1/1024 to 64 (a linear SVM's decision values are
 * small: its temperatures are below 1).
 */
function fitTemperature(scored: ReadonlyArray<{ scores: number[]; truth: number }>): number {
  let best = { temperature: 1, loss: Number.POSITIVE_INFINITY };
  for (let step = -40; step <= 24; step += 1) {
    const temperature = 2 ** (step / 4);
    let loss = 0;
    for (const { scores, truth } of scored) loss -= Math.max(Math.log(1e-12), logSoftmaxAt(scores, temperature, truth));
    if (loss < best.loss) best = { temperature, loss };
  }
  return best.temperature;
}

/**
 * About how many held-out texts the temperature is fitted on (one number needs few; scoring a text
 * costs naive Bayes labels × features, so this bounds the training time).
 */
const CALIBRATION_TEXTS = 400;

/** The classifiers the desk can route with. */
export type TextClassifierKind = 'naive-bayes' | 'logistic-regression' | 'linear-svm';

/**
 * A text classifier over {@link textFeatures} whose per-label log-odds are turned into probabilities
 * by temperature scaling fitted on an internal cross-validation of the training texts, so that a
 * confidence of 0.6 is right about 60% of the time. Deterministic: folds are by position in
 * `examples`, ties go to the label that sorts first. Use {@link NaiveBayesClassifier},
 * {@link LogisticRegressionClassifier} or {@link LinearSvmClassifier} (or {@link createTextClassifier}).
 */
export class TextClassifier {
  /** `undefined` when fewer than two labels were learned (then the one label, if any, is always the answer). */
  readonly #score: Scorer | undefined;
  readonly #labels: string[];
  readonly #size: number;
  readonly #featurize: (text: string) => string[];
  /** Which model it is. */
  readonly kind: TextClassifierKind;
  /** The fitted temperature (1: uncalibrated). */
  readonly temperature: number;
  /**
   * What the temperature was fitted on: how many fold models were trained (each on (folds − 1)/folds of the texts) and
   * how many held-out texts they scored; `{ folds: 0, texts: 0 }` without calibration.
   */
  readonly calibration: { folds: number; texts: number };

  /**
   * Trains the model and fits its calibration.
   * @param examples the training texts; texts without a content word are skipped
   * @throws {InvalidInputError} when the texts hold 2 labels or more but fewer than 10 distinct features (with one
   *   label, that label is every answer; with none, there is no answer)
   */
  protected constructor(kind: TextClassifierKind, examples: readonly LabelledText[], options: NaiveBayesOptions = {}) {
    this.kind = kind;
    const settings = {
      smoothing: options.smoothing ?? DEFAULT_NAIVE_BAYES.smoothing,
      presence: options.presence ?? DEFAULT_NAIVE_BAYES.presence,
    };
    const learn =
      kind === 'naive-bayes'
        ? naiveBayes(settings)
        : kind === 'linear-svm'
          ? linearSvm(options.lambda ?? SVM_LAMBDA, options.epochs ?? SVM_EPOCHS)
          : logisticRegression;
    const range = options.charNgrams;
    this.#featurize =
      range === undefined ? textFeatures : (text) => [...textFeatures(text), ...characterNgrams(text, range)];
    const allowed = options.labels === undefined ? undefined : new Set(options.labels);
    const groups = new Map<string, number>();
    const kept = examples
      .filter((example) => allowed === undefined || allowed.has(example.label))
      .map((example, index) => ({
        features: this.#featurize(example.text),
        label: example.label,
        group: example.group ?? `#${index}`,
        calibrate: example.calibrate !== false,
      }))
      .filter((example) => example.features.length > 0)
      .map((example) => {
        if (!groups.has(example.group)) groups.set(example.group, groups.size);
        // The position of its group, which decides its calibration fold.
        return { ...example, position: groups.get(example.group)! };
      });
    this.#labels = [...new Set(kept.map((example) => example.label))].sort();
    this.#size = kept.length;
    // The named error for too little data, whichever the model (naive Bayes raises it as it learns).
    if (this.#labels.length >= 2 && kind !== 'naive-bayes') checkTrainable(kept);
    this.#score = this.#labels.length < 2 ? undefined : learn(kept, this.#labels);
    const folds = options.calibrationFolds ?? 3;
    const wanted = options.calibrationTexts ?? CALIBRATION_TEXTS;
    const scored: Array<{ scores: number[]; truth: number }> = [];
    let trained = 0;
    // A fold's model scores every stride-th text the fold holds out, the stride chosen so that the fold alone offers the
    // `wanted` texts still missing when it holds that many (enough to fit one number, and scoring stays cheap). The folds
    // after the one that brings the count to `wanted` are not trained: each costs a training on (folds − 1)/folds of the texts.
    for (let fold = 0; this.#score !== undefined && folds > 1 && fold < folds && scored.length < wanted; fold += 1) {
      const heldOut = kept.filter((example) => example.calibrate && example.position % folds === fold);
      const train = kept.filter((example) => !example.calibrate || example.position % folds !== fold);
      if (heldOut.length === 0 || new Set(train.map((example) => example.label)).size < this.#labels.length) continue;
      const score = learn(train, this.#labels);
      trained += 1;
      const stride = Math.max(1, Math.floor(heldOut.length / (wanted - scored.length)));
      for (let i = 0; i < heldOut.length; i += stride) {
        const example = heldOut[i]!;
        scored.push({ scores: score(example.features), truth: this.#labels.indexOf(example.label) });
      }
    }
    this.temperature = scored.length === 0 ? 1 : fitTemperature(scored);
    this.calibration = { folds: trained, texts: scored.length };
  }

  /** How many training texts it learned from. */
  get size(): number {
    return this.#size;
  }

  /** The labels it can give, sorted. */
  get labels(): readonly string[] {
    return this.#labels;
  }

  /**
   * Classifies a text.
   * @returns the most probable label with its calibrated probability, or `undefined` when the text
   *   has no content word the model knows (a bare greeting)
   */
  classify(text: string): Classification | undefined {
    if (this.#score === undefined) {
      const only = this.#labels[0];
      return only === undefined || !hasContent(text)
        ? undefined
        : { label: only, confidence: 1, probabilities: [{ label: only, probability: 1 }] };
    }
    const scores = this.#score(this.#featurize(text));
    if (scores.every((score) => score === 0)) return undefined;
    const probabilities = softmax(scores, this.temperature)
      .map((probability, index) => ({ label: this.#labels[index]!, probability }))
      .sort((a, b) => b.probability - a.probability || (a.label < b.label ? -1 : 1));
    const best = probabilities[0]!;
    return { label: best.label, confidence: best.probability, probabilities };
  }
}

/**
 * A calibrated multinomial naive Bayes text classifier (winkjs's `wink-naive-bayes-text-classifier`,
 * binarized, additive smoothing 0.5) over {@link textFeatures}; see {@link TextClassifier}.
 * wink 2.2.1 as published: scoring a text costs labels² × features (for each label it sums the other labels' counts),
 * which the desk's classifiers, over 10 flows, afford.
 *
 * @example
 * ```ts
 * const router = new NaiveBayesClassifier([
 *   { id: 'a', text: 'I forgot my password', label: 'account_access' },
 *   { id: 'b', text: 'Where is my package?', label: 'shipping_issue' },
 * ]);
 * router.classify('cannot remember my password')?.label; // 'account_access'
 * ```
 */
export class NaiveBayesClassifier extends TextClassifier {
  /** @throws {InvalidInputError} see {@link TextClassifier} */
  constructor(examples: readonly LabelledText[], options: NaiveBayesOptions = {}) {
    super('naive-bayes', examples, options);
  }
}

/**
 * A calibrated TF-IDF + logistic regression text classifier (mljs's `ml-logistic-regression`, one
 * vs rest) over {@link textFeatures}; see {@link TextClassifier}.
 */
export class LogisticRegressionClassifier extends TextClassifier {
  /** @throws {InvalidInputError} see {@link TextClassifier} */
  constructor(examples: readonly LabelledText[], options: NaiveBayesOptions = {}) {
    super('logistic-regression', examples, options);
  }
}

/**
 * A calibrated TF-IDF + one-vs-rest linear SVM text classifier (stdlib's `@stdlib/ml-incr-binary-classification`:
 * Pegasos-style stochastic gradient descent on the hinge loss, options `lambda` and `epochs`) over
 * {@link textFeatures}; its decision values are calibrated into probabilities by temperature scaling, see
 * {@link TextClassifier}. Deterministic: the texts are shuffled in a seeded order.
 *
 * @example
 * ```ts
 * const cases = new LinearSvmClassifier(examples, { lambda: 1e-3, epochs: 5 });
 * cases.classify('I was charged twice')?.label;
 * ```
 */
export class LinearSvmClassifier extends TextClassifier {
  /** @throws {InvalidInputError} see {@link TextClassifier} */
  constructor(examples: readonly LabelledText[], options: NaiveBayesOptions = {}) {
    super('linear-svm', examples, options);
  }
}

/**
 * Trains a calibrated classifier of the given kind.
 * @throws {InvalidInputError} see {@link TextClassifier}
 */
export function createTextClassifier(
  kind: TextClassifierKind,
  examples: readonly LabelledText[],
  options: NaiveBayesOptions = {},
): TextClassifier {
  if (kind === 'naive-bayes') return new NaiveBayesClassifier(examples, options);
  return kind === 'linear-svm'
    ? new LinearSvmClassifier(examples, options)
    : new LogisticRegressionClassifier(examples, options);
}
