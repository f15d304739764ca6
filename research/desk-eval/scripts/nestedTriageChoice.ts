/**
 * The nested cross-validation that `triageCv.ts` and `triageReadCv.ts` run over their triage candidates:
 * for each of the 5 outer folds, a 4-fold cross-validation of the outer training folds only ranks the
 * candidates (most flows right; on a tie, fewer questions), and the winner is scored on the outer test fold.
 */
import type { AbcdConversation } from '@baton/support-desk-models';
import { crossValidationFolds } from '../src/folds.js';

/** Flows named right and questions asked, summed over conversations. */
export interface TriageTally {
  right: number;
  questions: number;
}

/** What {@link nestedTriageChoice} found. */
export interface NestedTriageResult {
  /** Per candidate (in the order given): its tally on the outer test folds, every fold counted. */
  outer: TriageTally[];
  /** Per candidate: its right count in the inner cross-validations, summed over the outer folds (of 4 × the conversations). */
  innerRightSummed: number[];
  /** Per outer fold: the fold, the candidate chosen (its index) and every candidate's inner tally. */
  folds: Array<{ fold: number; chosen: number; inner: TriageTally[]; trainingSize: number }>;
  /** The tally of the candidate each outer fold chose, on that fold's test conversations. */
  nested: TriageTally;
}

/**
 * Runs the nested cross-validation of `candidates` on `conversations` (folds by `crossValidationFolds`).
 *
 * @param train learns a model from training conversations (once per inner and per outer training set)
 * @param decide triage's decision on one conversation under a candidate, with a model trained without it:
 *   the flow it handed off with (right when it is the conversation's) and the questions it asked
 */
export function nestedTriageChoice<Candidate, Model>(
  conversations: readonly AbcdConversation[],
  candidates: readonly Candidate[],
  train: (items: readonly AbcdConversation[]) => Model,
  decide: (
    model: Model,
    conversation: AbcdConversation,
    candidate: Candidate,
  ) => { flow: string | undefined; questions: number },
): NestedTriageResult {
  const score = (model: Model, items: readonly AbcdConversation[], candidate: Candidate): TriageTally => {
    const tally = { right: 0, questions: 0 };
    for (const conversation of items) {
      const { flow, questions } = decide(model, conversation, candidate);
      if (flow === conversation.flow) tally.right += 1;
      tally.questions += questions;
    }
    return tally;
  };
  const empty = (): TriageTally => ({ right: 0, questions: 0 });
  const add = (to: TriageTally, tally: TriageTally) => {
    to.right += tally.right;
    to.questions += tally.questions;
  };
  const outer = candidates.map(empty);
  const innerRightSummed = candidates.map(() => 0);
  const folds: NestedTriageResult['folds'] = [];
  const nested = empty();
  for (const fold of crossValidationFolds(conversations)) {
    const inner = candidates.map(empty);
    for (const { train: items, test } of crossValidationFolds(fold.train, 4)) {
      const model = train(items);
      candidates.forEach((candidate, i) => {
        const tally = score(model, test, candidate);
        add(inner[i]!, tally);
        innerRightSummed[i]! += tally.right;
      });
    }
    const chosen = inner.reduce(
      (b, s, i) =>
        s.right > inner[b]!.right || (s.right === inner[b]!.right && s.questions < inner[b]!.questions) ? i : b,
      0,
    );
    folds.push({ fold: fold.fold, chosen, inner, trainingSize: fold.train.length });
    const model = train(fold.train);
    candidates.forEach((candidate, i) => {
      const tally = score(model, fold.test, candidate);
      add(outer[i]!, tally);
      if (i === chosen) add(nested, tally);
    });
  }
  return { outer, innerRightSummed, folds, nested };
}
