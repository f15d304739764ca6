import { InvalidInputError } from '@baton/core';
import incrBinaryClassification from '@stdlib/ml-incr-binary-classification';
import ndarray from '@stdlib/ndarray-ctor';
import LogisticRegression from 'ml-logistic-regression';
import { Matrix } from 'ml-matrix';
import createNaiveBayes from 'wink-naive-bayes-text-classifier';
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
  /** Folds of the internal cross-validation the calibration is fitted on (default 3; 0 or 1: no calibration, temperature 1). */
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

type WinkModel = ReturnType<typeof createNaiveBayes>;

/** A training text as features (computed once: wink would otherwise prepare the text again for every label). */
interface Featured {
  features: string[];
  label: string;
}

/** Naive Bayes' settings (see {@link NaiveBayesOptions}). */
interface NaiveBayesSettings {
  smoothing: number;
  presence: boolean;
}

const DEFAULT_NAIVE_BAYES: NaiveBayesSettings = { smoothing: 0.5, presence: true };

function trainNaiveBayes(examples: readonly Featured[], settings: NaiveBayesSettings = DEFAULT_NAIVE_BAYES): WinkModel {
  const model = createNaiveBayes();
  model.defineConfig({ considerOnlyPresence: settings.presence, smoothingFactor: settings.smoothing });
  for (const example of examples) model.learn(example.features, example.label);
  try {
    model.consolidate();
  } catch (error) {
    // wink refuses fewer than 10 distinct features (and fewer than 2 labels, which the caller avoids).
    const labels = new Set(examples.map((example) => example.label));
    throw new InvalidInputError(
      `Cannot train a text classifier on ${examples.length} texts with ${labels.size} label(s) (${[...labels].slice(0, 5).join(', ')}): ` +
        'it needs at least 2 labels and 10 distinct words; give it more conversations.',
      { cause: error },
    );
  }
  return model;
}

/** A trained model's scores: each label's log-odds (natural log, in `labels` order) for a text's features; all 0 when it knows none of them. */
type Scorer = (features: readonly string[]) => number[];

/** A way to learn a {@link Scorer} from featured texts over the given labels (every one of which occurs). */
type Learner = (examples: readonly Featured[], labels: readonly string[]) => Scorer;

/** Naive Bayes: each label's log-odds (natural log), from wink's one-vs-rest odds (log base 2). */
const naiveBayes =
  (settings: NaiveBayesSettings): Learner =>
  (examples, labels) => {
  const model = trainNaiveBayes(examples, settings);
  return (features) => {
    const odds = new Map(model.computeOdds([...features]) as Array<[string, number]>);
    return labels.map((label) => (odds.get(label) ?? 0) * Math.LN2);
  };
};

/** Gradient steps and step size of {@link logisticRegression} (set before measuring, not tuned on the figures). */
const LR_STEPS = 300;
const LR_RATE = 0.05;
/** Features in fewer training texts than this are left out (they cost time and say little). */
const LR_MIN_DF = 2;

/**
 * TF-IDF vectors over the features seen in at least {@link LR_MIN_DF} training texts: each feature present
 * weighs its inverse document frequency (`ln(N / df)`, presence only), the vector is L2-normalised, and with
 * `bias` a last column holds 1. `vectorize` returns `undefined` for a text with no known feature.
 */
function tfIdfVectorizer(
  examples: readonly Featured[],
  bias: boolean,
  maxFeatures = Number.POSITIVE_INFINITY,
): { columns: number; vectorize: (features: readonly string[]) => Float64Array | undefined } {
  const df = new Map<string, number>();
  for (const example of examples) for (const feature of new Set(example.features)) df.set(feature, (df.get(feature) ?? 0) + 1);
  const kept = [...df].filter(([, count]) => count >= LR_MIN_DF);
  // At most maxFeatures, the most frequent (as scikit-learn's `max_features`; a stable sort: ties keep their first text's order).
  if (kept.length > maxFeatures) kept.sort((a, b) => b[1] - a[1]).splice(maxFeatures);
  const vocabulary = new Map<string, { column: number; idf: number }>();
  for (const [feature, count] of kept) vocabulary.set(feature, { column: vocabulary.size, idf: Math.log(examples.length / count) });
  const size = vocabulary.size;
  const columns = size + (bias ? 1 : 0);
  const vectorize = (features: readonly string[]): Float64Array | undefined => {
    const row = new Float64Array(columns);
    for (const feature of features) {
      const known = vocabulary.get(feature);
      if (known !== undefined) row[known.column] = known.idf;
    }
    let norm = 0;
    for (let i = 0; i < size; i += 1) norm += row[i]! * row[i]!;
    if (norm === 0) return undefined;
    for (let i = 0; i < size; i += 1) row[i]! /= Math.sqrt(norm);
    if (bias) row[size] = 1;
    return row;
  };
  return { columns, vectorize };
}

/**
 * TF-IDF + logistic regression: features seen in at least two training texts, weighted by their
 * inverse document frequency (`ln(N / df)`, presence only), each text's vector L2-normalised, plus a
 * bias; mljs's one-vs-rest `ml-logistic-regression` (batch gradient descent, {@link LR_STEPS} steps of
 * {@link LR_RATE}: few enough steps to act as regularisation). A label's log-odds are its
 * one-vs-rest logit.
 */
const logisticRegression: Learner = (examples, labels) => {
  const { columns, vectorize } = tfIdfVectorizer(examples, true);
  const rows: Float64Array[] = [];
  const targets: number[] = [];
  for (const example of examples) {
    const row = vectorize(example.features);
    if (row === undefined) continue;
    rows.push(row);
    targets.push(labels.indexOf(example.label));
  }
  const model = new LogisticRegression({ numSteps: LR_STEPS, learningRate: LR_RATE });
  model.train(new Matrix(rows.map((row) => [...row])), Matrix.columnVector(targets));
  // mljs trains class i against the rest with class i as 0, so its logit for "not i" is x·w; i's is −x·w.
  const weights = model.classifiers.map((classifier) => classifier.weights.to1DArray());
  return (features) => {
    const row = vectorize(features);
    if (row === undefined) return labels.map(() => 0);
    return weights.map((w) => {
      let score = 0;
      for (let i = 0; i < columns; i += 1) if (row[i] !== 0) score -= row[i]! * w[i]!;
      return score;
    });
  };
};

/** The linear SVM's default regularisation λ ({@link NaiveBayesOptions.lambda}); see {@link linearSvm}. */
export const SVM_LAMBDA = 0.03;
/** The linear SVM's default number of passes over the training texts ({@link NaiveBayesOptions.epochs}). */
export const SVM_EPOCHS = 10;
/** The linear SVM averages the iterates of every this many steps of its second half of passes (fewer sums, the same mean). */
const SVM_AVERAGE_EVERY = 8;
/**
 * The linear SVM's vocabulary: at most this many features (the most frequent of those in at least two training texts).
 * Its vectors are dense, so that each step costs the vocabulary's size: this bounds its training time.
 */
const SVM_MAX_FEATURES = 1000;
/** The seed of the linear SVM's shuffled orders: the same texts give the same model. */
const SVM_SEED = 14;

/** A seeded pseudo-random generator (mulberry32) of numbers in [0, 1): the SVM's shuffles are reproducible. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * TF-IDF + one-vs-rest linear SVM: the vectors of {@link tfIdfVectorizer} (features in at least two training texts,
 * plus a bias column of 1), one binary soft-margin linear SVM per label (that label +1, the others −1), each trained
 * by stdlib's `@stdlib/ml-incr-binary-classification`: stochastic gradient descent on the hinge loss with Pegasos'
 * step size 1/(λt) and L2 regularisation λ (the bias column is regularised with the rest: the library's own
 * unregularised intercept takes steps of 1/(λt) too, which swamp the weights), over `epochs` passes of the texts in a
 * seeded shuffled order (the same for every label). The model kept is the mean of the library's iterates over the
 * second half of the passes, taken every {@link SVM_AVERAGE_EVERY} steps (averaged SGD, Polyak–Ruppert: the last
 * iterate of a few hundred steps is noisy). A label's "log-odds" are its decision value w·x; the calibration's
 * temperature scales them.
 */
const linearSvm =
  (lambda: number, epochs: number): Learner =>
  (examples, labels) => {
    const { columns, vectorize } = tfIdfVectorizer(examples, true, SVM_MAX_FEATURES);
    const rows: Array<{ vector: Float64Array; label: number }> = [];
    for (const example of examples) {
      const vector = vectorize(example.features);
      if (vector !== undefined) rows.push({ vector, label: labels.indexOf(example.label) });
    }
    const inputs = rows.map((row) => new ndarray('float64', row.vector, [columns], [1], 0, 'row-major'));
    const models = labels.map(() => incrBinaryClassification(columns, { loss: 'hinge', lambda, learningRate: ['pegasos'], intercept: false }));
    // The sum of each model's iterates over the averaged passes, then their mean: the weights, the bias's last.
    const weights = labels.map(() => new Float64Array(columns));
    const averagedFrom = Math.floor(epochs / 2);
    const random = seededRandom(SVM_SEED);
    const order = rows.map((_, i) => i);
    let step = 0;
    let samples = 0;
    for (let epoch = 0; epoch < epochs; epoch += 1) {
      for (let i = order.length - 1; i > 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const i of order) {
        step += 1;
        const averaged = epoch >= averagedFrom && step % SVM_AVERAGE_EVERY === 0;
        if (averaged) samples += 1;
        for (const [k, model] of models.entries()) {
          const coefficients = model(inputs[i], rows[i]!.label === k ? 1 : -1).data as Float64Array;
          if (!averaged) continue;
          const sum = weights[k]!;
          for (let d = 0; d < columns; d += 1) sum[d]! += coefficients[d]!;
        }
      }
    }
    for (const [k, w] of weights.entries()) {
      // Too few steps to have averaged any (fewer than SVM_AVERAGE_EVERY texts): the last iterate.
      if (samples === 0) w.set(models[k]!().data as Float64Array);
      else for (let d = 0; d < columns; d += 1) w[d]! /= samples;
    }
    return (features) => {
      const row = vectorize(features);
      if (row === undefined) return labels.map(() => 0);
      return weights.map((w) => {
        let score = 0;
        for (let i = 0; i < columns; i += 1) if (row[i] !== 0) score += row[i]! * w[i]!;
        return score;
      });
    };
  };

function softmax(scores: readonly number[], temperature: number): number[] {
  const scaled = scores.map((score) => score / temperature);
  const top = Math.max(...scaled);
  const exps = scaled.map((score) => Math.exp(score - top));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
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
    for (const { scores, truth } of scored) loss -= Math.log(Math.max(1e-12, softmax(scores, temperature)[truth]!));
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
   * Trains the model and fits its calibration.
   * @param examples the training texts; texts without a content word are skipped
   * @throws {InvalidInputError} when the texts hold 2 labels or more but fewer than 10 distinct features (with one
   *   label, that label is every answer; with none, there is no answer)
   */
  protected constructor(kind: TextClassifierKind, examples: readonly LabelledText[], options: NaiveBayesOptions = {}) {
    this.kind = kind;
    const settings = { smoothing: options.smoothing ?? DEFAULT_NAIVE_BAYES.smoothing, presence: options.presence ?? DEFAULT_NAIVE_BAYES.presence };
    const learn =
      kind === 'naive-bayes' ? naiveBayes(settings) : kind === 'linear-svm' ? linearSvm(options.lambda ?? SVM_LAMBDA, options.epochs ?? SVM_EPOCHS) : logisticRegression;
    const range = options.charNgrams;
    this.#featurize = range === undefined ? textFeatures : (text) => [...textFeatures(text), ...characterNgrams(text, range)];
    const allowed = options.labels === undefined ? undefined : new Set(options.labels);
    const groups = new Map<string, number>();
    const kept = examples
      .filter((example) => allowed === undefined || allowed.has(example.label))
      .map((example, index) => ({ features: this.#featurize(example.text), label: example.label, group: example.group ?? `#${index}`, calibrate: example.calibrate !== false }))
      .filter((example) => example.features.length > 0)
      .map((example) => {
        if (!groups.has(example.group)) groups.set(example.group, groups.size);
        // The position of its group, which decides its calibration fold.
        return { ...example, position: groups.get(example.group)! };
      });
    this.#labels = [...new Set(kept.map((example) => example.label))].sort();
    this.#size = kept.length;
    // The named error for too little data, whichever the model (naive Bayes raises it as it learns).
    if (this.#labels.length >= 2 && kind !== 'naive-bayes') trainNaiveBayes(kept, settings);
    this.#score = this.#labels.length < 2 ? undefined : learn(kept, this.#labels);
    const folds = options.calibrationFolds ?? 3;
    const scored: Array<{ scores: number[]; truth: number }> = [];
    const stride = Math.max(1, Math.ceil(kept.length / (options.calibrationTexts ?? CALIBRATION_TEXTS)));
    for (let fold = 0; this.#score !== undefined && folds > 1 && fold < folds; fold += 1) {
      const train = kept.filter((example) => !example.calibrate || example.position % folds !== fold);
      if (new Set(train.map((example) => example.label)).size < this.#labels.length) continue;
      const score = learn(train, this.#labels);
      for (const example of kept) {
        // At most about CALIBRATION_TEXTS held-out texts are scored: enough to fit one number, and training stays fast.
        if (example.calibrate && example.position % folds === fold && Math.floor(example.position / folds) % stride === 0) scored.push({ scores: score(example.features), truth: this.#labels.indexOf(example.label) });
      }
    }
    this.temperature = scored.length === 0 ? 1 : fitTemperature(scored);
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
      return only === undefined || !hasContent(text) ? undefined : { label: only, confidence: 1, probabilities: [{ label: only, probability: 1 }] };
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
 * The repository installs wink 2.2.1 with a patch (`patches/` at its root) that gives the same odds
 * faster: the other labels' counts come from totals summed once when the model is consolidated,
 * not from a loop over the labels for each word of each text scored (labels × features instead
 * of labels² × features).
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
export function createTextClassifier(kind: TextClassifierKind, examples: readonly LabelledText[], options: NaiveBayesOptions = {}): TextClassifier {
  if (kind === 'naive-bayes') return new NaiveBayesClassifier(examples, options);
  return kind === 'linear-svm' ? new LinearSvmClassifier(examples, options) : new LogisticRegressionClassifier(examples, options);
}
