/**
 * Chooses the router's classifier by nested cross-validation and prints the figures: for each of the
 * 5 outer folds, an inner 4-fold cross-validation on the outer training folds ONLY compares naive
 * Bayes with TF-IDF + logistic regression (flow right on the customer's opening turns: everything
 * before the agent's first console action, at most four messages); the winner, trained on the outer
 * training folds, is scored on the outer test fold. Also prints each model's outer accuracy on the
 * first message, the first two and the opening turns, and its training time.
 *
 * `npx tsx --conditions=source examples/support-desk/scripts/routingCv.ts [FILE]`
 */
import { type AbcdConversation, customerMessages, loadConversations, openingText } from '../src/abcdData.js';
import { DEMO_DATA_FILE } from '../src/dataSource.js';
import { crossValidationFolds } from '../src/folds.js';
import { createTextClassifier, type TextClassifier, type TextClassifierKind } from '../src/textClassifier.js';

const KINDS: TextClassifierKind[] = ['naive-bayes', 'logistic-regression'];
const file = process.argv[2] ?? DEMO_DATA_FILE;
const conversations = await loadConversations(file);
const views: Array<[string, (c: AbcdConversation) => string]> = [
  ['first message', (c) => customerMessages(c)[0] ?? ''],
  ['first two messages', (c) => customerMessages(c).slice(0, 2).join('\n')],
  ['opening turns', openingText],
];
const train = (kind: TextClassifierKind, items: readonly AbcdConversation[], calibrationFolds?: number): TextClassifier =>
  createTextClassifier(kind, items.map((c) => ({ id: c.id, text: openingText(c), label: c.flow })), calibrationFolds === undefined ? {} : { calibrationFolds });
const percent = (right: number, n: number) => `${((100 * right) / n).toFixed(1)}%`;

const outer = KINDS.map(() => views.map(() => 0));
const seconds = KINDS.map(() => 0);
let nestedRight = 0;
const chosen: string[] = [];
for (const fold of crossValidationFolds(conversations)) {
  // Inner cross-validation on the outer training folds only: accuracy on the opening turns (no calibration needed to rank).
  const inner = KINDS.map((kind) =>
    crossValidationFolds(fold.train, 4).reduce((right, { train: t, test }) => {
      const model = train(kind, t, 0);
      return right + test.filter((c) => model.classify(openingText(c))?.label === c.flow).length;
    }, 0),
  );
  const winner = inner[1]! > inner[0]! ? 1 : 0;
  chosen.push(`fold ${fold.fold}: ${KINDS[winner]} (inner ${inner.map((r) => percent(r, fold.train.length)).join(' vs ')})`);
  for (const [k, kind] of KINDS.entries()) {
    const started = performance.now();
    const model = train(kind, fold.train);
    seconds[k]! += (performance.now() - started) / 1000;
    for (const c of fold.test) {
      views.forEach(([, text], v) => {
        if (model.classify(text(c))?.label === c.flow) outer[k]![v]! += 1;
      });
      if (k === winner && model.classify(openingText(c))?.label === c.flow) nestedRight += 1;
    }
  }
}
const n = conversations.length;
console.log(`Flow right, 5-fold cross-validation on ${n} conversations of ${file}:`);
for (const [k, kind] of KINDS.entries()) {
  console.log(`  ${kind}: ${views.map(([name], v) => `${name} ${percent(outer[k]![v]!, n)}`).join(', ')}; ${(seconds[k]! / 5).toFixed(1)} s per calibrated training`);
}
console.log(`Chosen on the training folds only (inner 4-fold CV, opening turns):\n  ${chosen.join('\n  ')}`);
console.log(`The chosen model per fold, on the opening turns of the outer test folds: ${percent(nestedRight, n)}`);
