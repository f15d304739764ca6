/**
 * Prints the flow classifiers' 5-fold cross-validated accuracy on the customer's opening turns
 * (everything before the agent's first console action, at most four messages), and on the first one
 * and first two messages alone, for each classifier the desk can route with.
 *
 * `npx tsx --conditions=source examples/support-desk/scripts/routingCv.ts [FILE]`
 */
import { customerMessages, loadConversations, openingText } from '../src/abcdData.js';
import { DEMO_DATA_FILE } from '../src/dataSource.js';
import { crossValidationFolds } from '../src/folds.js';
import { createTextClassifier, type TextClassifierKind } from '../src/textClassifier.js';

const file = process.argv[2] ?? DEMO_DATA_FILE;
const conversations = await loadConversations(file);
const views: Array<[string, (c: (typeof conversations)[number]) => string]> = [
  ['first message', (c) => customerMessages(c)[0] ?? ''],
  ['first two messages', (c) => customerMessages(c).slice(0, 2).join('\n')],
  ['opening turns', openingText],
];
for (const kind of ['naive-bayes', 'logistic-regression'] as TextClassifierKind[]) {
  const started = performance.now();
  const right = views.map(() => 0);
  for (const { train, test } of crossValidationFolds(conversations)) {
    const classifier = createTextClassifier(kind, train.map((c) => ({ id: c.id, text: openingText(c), label: c.flow })));
    for (const c of test) views.forEach(([, text], i) => { if (classifier.classify(text(c))?.label === c.flow) right[i]! += 1; });
  }
  const figures = views.map(([name], i) => `${name} ${((100 * right[i]!) / conversations.length).toFixed(1)}%`).join(', ');
  console.log(`${kind}: flow right (5-fold CV, ${conversations.length} conversations): ${figures}; ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
