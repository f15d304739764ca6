/**
 * Chooses the router's classifier by nested cross-validation and prints the figures: for each of the
 * 5 outer folds, an inner 4-fold cross-validation on the outer training folds ONLY compares the
 * candidates (flow right on the customer's first two messages plus right on the opening turns:
 * everything before the agent's first console action, at most four messages); the winner, trained on
 * the outer training folds, is scored on the outer test fold. Also prints each candidate's outer
 * accuracy on the first message, the first two, the first three and the opening turns, and its
 * training time. The candidates: naive Bayes on words (the first pass's), and naive Bayes on words
 * and character n-grams at two smoothings, binarized or counted, one of them also learning each
 * conversation's first message and first two messages as texts of their own; with `--logistic-regression` also
 * TF-IDF + mljs logistic regression (about a minute per training).
 *
 * `npx tsx --conditions=source examples/support-desk/scripts/routingCv.ts [FILE] [--logistic-regression]`
 */
import { type AbcdConversation, customerMessages, loadConversations, openingText } from '../src/data/abcdData.js';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';
import { crossValidationFolds } from '../src/data/folds.js';
import { createTextClassifier, type NaiveBayesOptions, type TextClassifier, type TextClassifierKind } from '../src/models/textClassifier.js';

interface Candidate {
  name: string;
  kind: TextClassifierKind;
  options: NaiveBayesOptions;
  /** Also learn each training conversation's first message and first two messages as texts of their own. */
  prefixes?: boolean;
}
const CANDIDATES: Candidate[] = [
  { name: 'nb words', kind: 'naive-bayes', options: {} },
  { name: 'nb words+chars3-5 a=0.25', kind: 'naive-bayes', options: { charNgrams: { min: 3, max: 5 }, smoothing: 0.25 } },
  { name: 'nb words+chars3-5 a=0.5 counts', kind: 'naive-bayes', options: { charNgrams: { min: 3, max: 5 }, presence: false } },
  { name: 'nb words+chars2-5 a=0.25 counts', kind: 'naive-bayes', options: { charNgrams: { min: 2, max: 5 }, smoothing: 0.25, presence: false } },
  { name: 'nb words+chars2-5 a=0.5 counts', kind: 'naive-bayes', options: { charNgrams: { min: 2, max: 5 }, presence: false } },
  {
    name: 'nb words+chars2-5 a=0.25 counts, + prefixes',
    kind: 'naive-bayes',
    options: { charNgrams: { min: 2, max: 5 }, smoothing: 0.25, presence: false },
    prefixes: true,
  },
];
const args = process.argv.slice(2);
if (args.includes('--logistic-regression')) CANDIDATES.push({ name: 'logistic-regression', kind: 'logistic-regression', options: {} });
const file = args.find((arg) => !arg.startsWith('--')) ?? DEMO_DATA_FILE;
const conversations = await loadConversations(file);
const views: Array<[string, (c: AbcdConversation) => string]> = [
  ['first message', (c) => customerMessages(c)[0] ?? ''],
  ['first two messages', (c) => customerMessages(c).slice(0, 2).join('\n')],
  ['first three messages', (c) => customerMessages(c).slice(0, 3).join('\n')],
  ['opening turns', openingText],
];
/** The views the inner cross-validation scores on: the first two messages and the opening turns. */
const CHOOSING_VIEWS = [1, 3];
const train = (candidate: Candidate, items: readonly AbcdConversation[], calibrationFolds?: number): TextClassifier =>
  createTextClassifier(
    candidate.kind,
    items.flatMap((c) => [
      { id: c.id, text: openingText(c), label: c.flow, group: c.id },
      ...(candidate.prefixes ? [1, 2].map((k) => ({ id: `${c.id}-${k}`, text: customerMessages(c).slice(0, k).join('\n'), label: c.flow, group: c.id })) : []),
    ]),
    calibrationFolds === undefined ? candidate.options : { ...candidate.options, calibrationFolds },
  );
const percent = (right: number, n: number) => `${((100 * right) / n).toFixed(1)}%`;
const rightOn = (model: TextClassifier, items: readonly AbcdConversation[], view: number) => items.filter((c) => model.classify(views[view]![1](c))?.label === c.flow).length;

const outer = CANDIDATES.map(() => views.map(() => 0));
const seconds = CANDIDATES.map(() => 0);
const nestedRight = views.map(() => 0);
const chosen: string[] = [];
for (const fold of crossValidationFolds(conversations)) {
  // Inner cross-validation on the outer training folds only (no calibration needed to rank).
  const inner = CANDIDATES.map((candidate) =>
    crossValidationFolds(fold.train, 4).reduce((right, { train: t, test }) => {
      const model = train(candidate, t, 0);
      return right + CHOOSING_VIEWS.reduce((sum, view) => sum + rightOn(model, test, view), 0);
    }, 0),
  );
  const winner = inner.indexOf(Math.max(...inner));
  chosen.push(`fold ${fold.fold}: ${CANDIDATES[winner]!.name} (inner ${inner.map((r) => percent(r, CHOOSING_VIEWS.length * fold.train.length)).join(' / ')})`);
  for (const [k, candidate] of CANDIDATES.entries()) {
    const started = performance.now();
    const model = train(candidate, fold.train);
    seconds[k]! += (performance.now() - started) / 1000;
    views.forEach((_, v) => {
      const right = rightOn(model, fold.test, v);
      outer[k]![v]! += right;
      if (k === winner) nestedRight[v]! += right;
    });
  }
}
const n = conversations.length;
console.log(`Flow right, 5-fold cross-validation on ${n} conversations of ${file}:`);
for (const [k, candidate] of CANDIDATES.entries()) {
  console.log(`  ${candidate.name}: ${views.map(([name], v) => `${name} ${percent(outer[k]![v]!, n)}`).join(', ')}; ${(seconds[k]! / 5).toFixed(2)} s per calibrated training`);
}
console.log(`Chosen on the training folds only (inner 4-fold CV, first two messages + opening turns; candidates in the order above):\n  ${chosen.join('\n  ')}`);
console.log(`The chosen candidate per fold, on the outer test folds: ${views.map(([name], v) => `${name} ${percent(nestedRight[v]!, n)}`).join(', ')}`);
