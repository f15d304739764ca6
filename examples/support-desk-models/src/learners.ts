/**
 * The models a {@link TextClassifier} can learn, each a {@link Learner}: from featured training texts to a
 * {@link Scorer} of each label's log-odds (or decision value), which the classifier then calibrates. Naive Bayes is
 * winkjs's, logistic regression mljs's, the linear SVM stdlib's; this file turns texts into what each library takes.
 */
import { InvalidInputError } from '@baton/core';
import BinaryClassificationModel from '@stdlib/ml-incr-binary-classification/lib/model.js';
import ndarray from '@stdlib/ndarray-ctor';
import LogisticRegression from 'ml-logistic-regression';
import { Matrix } from 'ml-matrix';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import createNaiveBayes from 'wink-naive-bayes-text-classifier';

type WinkModel = ReturnType<typeof createNaiveBayes>;

/** A training text as features (computed once: wink would otherwise prepare the text again for every label). */
export interface Featured {
  features: string[];
  label: string;
}

/** Naive Bayes' settings (see `NaiveBayesOptions` in textClassifier.ts). */
export interface NaiveBayesSettings {
  smoothing: number;
  presence: boolean;
}

/** The desk's naive Bayes settings when none are given: smoothing 0.5, binarized features. */
export const DEFAULT_NAIVE_BAYES: NaiveBayesSettings = { smoothing: 0.5, presence: true };

/** wink's floor, kept by every kind of classifier: at least this many distinct features among the training texts. */
const MIN_VOCABULARY = 10;

/** The named error for training texts too few to learn from (what wink refuses, whichever the model). */
function tooLittleData(examples: readonly Featured[], cause?: unknown): InvalidInputError {
  const labels = new Set(examples.map((example) => example.label));
  return new InvalidInputError(
    `Cannot train a text classifier on ${examples.length} texts with ${labels.size} label(s) (${[...labels].slice(0, 5).join(', ')}): ` +
      'it needs at least 2 labels and 10 distinct words; give it more conversations.',
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Checks that featured texts of 2 labels or more hold enough to learn from: at least {@link MIN_VOCABULARY} distinct
 * features, the floor wink's naive Bayes enforces, so that every kind of classifier refuses the same texts.
 * @throws {InvalidInputError} when they hold fewer distinct features
 * @example
 * ```ts
 * checkTrainable([{ features: ['password'], label: 'x' }, { features: ['package'], label: 'y' }]); // throws InvalidInputError
 * ```
 */
export function checkTrainable(examples: readonly Featured[]): void {
  const vocabulary = new Set<string>();
  for (const example of examples) for (const feature of example.features) vocabulary.add(feature);
  if (vocabulary.size < MIN_VOCABULARY) throw tooLittleData(examples);
}

/**
 * Trains winkjs's naive Bayes on featured texts.
 * @throws {InvalidInputError} when wink refuses the texts (fewer than 2 labels or {@link MIN_VOCABULARY} distinct features)
 */
function trainNaiveBayes(examples: readonly Featured[], settings: NaiveBayesSettings = DEFAULT_NAIVE_BAYES): WinkModel {
  const model = createNaiveBayes();
  model.defineConfig({ considerOnlyPresence: settings.presence, smoothingFactor: settings.smoothing });
  for (const example of examples) model.learn(example.features, example.label);
  try {
    model.consolidate();
  } catch (error) {
    // wink refuses fewer than 10 distinct features (and fewer than 2 labels, which the caller avoids).
    throw tooLittleData(examples, error);
  }
  return model;
}

/** A trained model's scores: each label's log-odds (natural log, in `labels` order) for a text's features; all 0 when it knows none of them. */
export type Scorer = (features: readonly string[]) => number[];

/** A way to learn a {@link Scorer} from featured texts over the given labels (every one of which occurs). */
export type Learner = (examples: readonly Featured[], labels: readonly string[]) => Scorer;

/** Naive Bayes: each label's log-odds (natural log), from wink's one-vs-rest odds (log base 2). */
export const naiveBayes =
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

/** A text's TF-IDF vector as its nonzero entries, in ascending column order (the bias column left out: it always holds 1). */
interface SparseVector {
  columns: Int32Array;
  values: Float64Array;
}

/**
 * TF-IDF vectors over the features seen in at least {@link LR_MIN_DF} training texts: each feature present
 * weighs its inverse document frequency (`ln(N / df)`, presence only), the vector is L2-normalised, and a last column,
 * the bias, holds 1 (`columns` counts it). `vectorize` gives the nonzero entries, bias left out (`undefined` for a text
 * with no known feature); `dense` the whole vector, bias included.
 */
function tfIdfVectorizer(
  examples: readonly Featured[],
  maxFeatures = Number.POSITIVE_INFINITY,
): {
  columns: number;
  vectorize: (features: readonly string[]) => SparseVector | undefined;
  dense: (vector: SparseVector) => Float64Array;
} {
  const df = new Map<string, number>();
  for (const example of examples)
    for (const feature of new Set(example.features)) df.set(feature, (df.get(feature) ?? 0) + 1);
  const kept = [...df].filter(([, count]) => count >= LR_MIN_DF);
  // At most maxFeatures, the most frequent (as scikit-learn's `max_features`; a stable sort: ties keep their first text's order).
  if (kept.length > maxFeatures) kept.sort((a, b) => b[1] - a[1]).splice(maxFeatures);
  const vocabulary = new Map<string, number>();
  const idf = new Float64Array(kept.length);
  for (const [feature, count] of kept) {
    idf[vocabulary.size] = Math.log(examples.length / count);
    vocabulary.set(feature, vocabulary.size);
  }
  const size = vocabulary.size;
  const columns = size + 1;
  const vectorize = (features: readonly string[]): SparseVector | undefined => {
    const present = new Set<number>();
    for (const feature of features) {
      const column = vocabulary.get(feature);
      if (column !== undefined) present.add(column);
    }
    const ordered = Int32Array.from(present).sort();
    // Summed in column order, as over the whole vector (its zeros add nothing): the same norm to the last bit.
    let norm = 0;
    for (const column of ordered) norm += idf[column]! * idf[column]!;
    if (norm === 0) return undefined;
    const values = new Float64Array(ordered.length);
    for (const [i, column] of ordered.entries()) values[i] = idf[column]! / Math.sqrt(norm);
    return { columns: ordered, values };
  };
  const dense = (vector: SparseVector): Float64Array => {
    const row = new Float64Array(columns);
    for (const [i, column] of vector.columns.entries()) row[column] = vector.values[i]!;
    row[size] = 1;
    return row;
  };
  return { columns, vectorize, dense };
}

/**
 * The scorer of linear one-vs-rest models over {@link tfIdfVectorizer}'s vectors (the bias column the last): each
 * label's `sign · w·x` (all 0 when the text has no known feature). mljs's logistic regression needs sign −1 (see
 * {@link logisticRegression}).
 */
function linearScorer(
  vectorize: (features: readonly string[]) => SparseVector | undefined,
  weights: ReadonlyArray<ArrayLike<number>>,
  labels: readonly string[],
  sign: 1 | -1,
): Scorer {
  return (features) => {
    const vector = vectorize(features);
    if (vector === undefined) return labels.map(() => 0);
    return weights.map((w) => {
      let score = 0;
      for (let i = 0; i < vector.columns.length; i += 1) score += vector.values[i]! * w[vector.columns[i]!]!;
      // The bias column, the last, holds 1.
      score += w[w.length - 1]!;
      return sign * score;
    });
  };
}

/**
 * TF-IDF + logistic regression: features seen in at least two training texts, weighted by their
 * inverse document frequency (`ln(N / df)`, presence only), each text's vector L2-normalised, plus a
 * bias; mljs's one-vs-rest `ml-logistic-regression` (batch gradient descent, {@link LR_STEPS} steps of
 * {@link LR_RATE}: few enough steps to act as regularisation). A label's log-odds are its
 * one-vs-rest logit.
 */
export const logisticRegression: Learner = (examples, labels) => {
  const { vectorize, dense } = tfIdfVectorizer(examples);
  const rows: Float64Array[] = [];
  const targets: number[] = [];
  for (const example of examples) {
    const vector = vectorize(example.features);
    if (vector === undefined) continue;
    rows.push(dense(vector));
    targets.push(labels.indexOf(example.label));
  }
  const model = new LogisticRegression({ numSteps: LR_STEPS, learningRate: LR_RATE });
  model.train(new Matrix(rows.map((row) => [...row])), Matrix.columnVector(targets));
  // mljs trains class i against the rest with class i as 0, so its logit for "not i" is x·w; i's is −x·w.
  const weights = model.classifiers.map((classifier) => classifier.weights.to1DArray());
  return linearScorer(vectorize, weights, labels, -1);
};

/** The linear SVM's default regularisation λ (`NaiveBayesOptions.lambda`); see {@link linearSvm}. */
export const SVM_LAMBDA = 0.03;
/** The linear SVM's default number of passes over the training texts (`NaiveBayesOptions.epochs`). */
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
export const linearSvm =
  (lambda: number, epochs: number): Learner =>
  (examples, labels) => {
    const { columns, vectorize } = tfIdfVectorizer(examples, SVM_MAX_FEATURES);
    const rows: Array<{ vector: SparseVector; label: number }> = [];
    for (const example of examples) {
      const vector = vectorize(example.features);
      if (vector !== undefined) rows.push({ vector, label: labels.indexOf(example.label) });
    }
    // The library takes dense vectors: each text's is written into one buffer for its step and cleared after it (a
    // dense copy of every text would cost memory, and time to collect it, for nothing).
    const buffer = new Float64Array(columns);
    buffer[columns - 1] = 1;
    const input = new ndarray('float64', buffer, [columns], [1], 0, 'row-major');
    // The library's model itself, not the accumulator its package exports: that accumulator returns the coefficients
    // after every step, a dense copy that cost as much as the step; they are read here only when averaged.
    const models = labels.map(
      () =>
        new BinaryClassificationModel(columns, { loss: 'hinge', lambda, learningRate: ['pegasos'], intercept: false }),
    );
    // The sum of each model's iterates over the averaged passes, then their mean: the weights, the bias's last.
    const weights = labels.map(() => new Float64Array(columns));
    const averagedFrom = Math.floor(epochs / 2);
    // pure-rand's xoroshiro128+ (the generator fast-check uses), seeded: the same texts give the same shuffles.
    const random = xoroshiro128plus(SVM_SEED);
    const order = rows.map((_, i) => i);
    let step = 0;
    let samples = 0;
    for (let epoch = 0; epoch < epochs; epoch += 1) {
      for (let i = order.length - 1; i > 0; i -= 1) {
        const j = uniformInt(random, 0, i);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const i of order) {
        step += 1;
        const averaged = epoch >= averagedFrom && step % SVM_AVERAGE_EVERY === 0;
        if (averaged) samples += 1;
        const { vector, label } = rows[i]!;
        for (let j = 0; j < vector.columns.length; j += 1) buffer[vector.columns[j]!] = vector.values[j]!;
        for (let k = 0; k < models.length; k += 1) {
          const model = models[k]!;
          model.update(input, label === k ? 1 : -1);
          if (!averaged) continue;
          const coefficients = model.coefficients.data;
          const sum = weights[k]!;
          for (let d = 0; d < columns; d += 1) sum[d]! += coefficients[d]!;
        }
        for (const column of vector.columns) buffer[column] = 0;
      }
    }
    for (const [k, w] of weights.entries()) {
      // Too few steps to have averaged any (fewer than SVM_AVERAGE_EVERY texts): the last iterate.
      if (samples === 0) w.set(models[k]!.coefficients.data);
      else for (let d = 0; d < columns; d += 1) w[d]! /= samples;
    }
    return linearScorer(vectorize, weights, labels, 1);
  };
