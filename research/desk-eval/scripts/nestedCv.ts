/**
 * Nested cross-validation of candidate models, shared by the scripts that choose a classifier
 * (`routingCv.ts`, `caseCv.ts`): for each of the 5 outer folds, an inner 4-fold cross-validation on
 * the outer training folds ONLY ranks the candidates (summed over the choosing views); the winner,
 * trained on the outer training folds, is scored on the outer test fold. Every candidate is also
 * scored on every outer test fold, and its training timed.
 */
import { crossValidationFolds } from '../src/folds.js';

/** What {@link nestedCrossValidation} needs: the items, the candidates, how to train one and how to count it right. */
export interface NestedCvOptions<Item extends { id: string }, Candidate, Model> {
  items: readonly Item[];
  candidates: readonly Candidate[];
  /** How many views (texts of an item) a model is scored on, and which of them choose. */
  views: number;
  choosingViews: readonly number[];
  /** Trains a candidate; `inner` is true in the inner cross-validation (e.g. to skip calibration). */
  train: (candidate: Candidate, items: readonly Item[], inner: boolean) => Model;
  /** How many of `items` the model gets right on view `view`. */
  rightOn: (model: Model, items: readonly Item[], view: number) => number;
}

/** Per candidate and view, right on the outer test folds; per view, the chosen candidates' right; the choice per fold; seconds per training. */
export interface NestedCvResult {
  outer: number[][];
  nestedRight: number[];
  /** Per outer fold: the winner's index and every candidate's inner right count. */
  chosen: Array<{ fold: number; winner: number; inner: number[]; trainingItems: number }>;
  /** Mean seconds per outer training, per candidate. */
  seconds: number[];
}

/** Runs the nested cross-validation (see the module's comment). */
export function nestedCrossValidation<Item extends { id: string }, Candidate, Model>(
  options: NestedCvOptions<Item, Candidate, Model>,
): NestedCvResult {
  const { candidates, views, choosingViews, train, rightOn } = options;
  const outer = candidates.map(() => Array.from({ length: views }, () => 0));
  const seconds = candidates.map(() => 0);
  const nestedRight = Array.from({ length: views }, () => 0);
  const chosen: NestedCvResult['chosen'] = [];
  const folds = crossValidationFolds(options.items);
  for (const fold of folds) {
    const inner = candidates.map((candidate) =>
      crossValidationFolds(fold.train, 4).reduce((right, { train: t, test }) => {
        const model = train(candidate, t, true);
        return right + choosingViews.reduce((sum, view) => sum + rightOn(model, test, view), 0);
      }, 0),
    );
    const winner = inner.indexOf(Math.max(...inner));
    chosen.push({ fold: fold.fold, winner, inner, trainingItems: fold.train.length });
    for (const [k, candidate] of candidates.entries()) {
      const started = performance.now();
      const model = train(candidate, fold.train, false);
      seconds[k]! += (performance.now() - started) / 1000 / folds.length;
      for (let v = 0; v < views; v += 1) {
        const right = rightOn(model, fold.test, v);
        outer[k]![v]! += right;
        if (k === winner) nestedRight[v]! += right;
      }
    }
  }
  return { outer, nestedRight, chosen, seconds };
}

/** `right` of `n` as a percentage with one decimal (`'83.5%'`). */
export function percent(right: number, n: number): string {
  return `${((100 * right) / n).toFixed(1)}%`;
}
