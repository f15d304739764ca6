/**
 * Chooses the confidence at which a specialist hands a customer back (the flow classifier of the
 * case texts giving another specialist's flows at least that much; `AbcdPolicyModel`'s
 * `rerouteConfidence`) by nested cross-validation on a simulation, and prints the figures. Triage's
 * choice is simulated by the router's classifier on the opening turns, the specialist's second
 * opinion by the calibrated flow classifier of the case texts on everything the customer said; a
 * conversation counts as right when the specialist it ends with covers its flow. For each of the 5
 * outer folds an inner 4-fold cross-validation on the outer training folds ONLY chooses the
 * threshold (ties: the higher, fewer handoffs back); the choice is scored on the outer test fold.
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/rerouteCv.ts [FILE]`
 */

import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { specialistForFlow } from '@baton/example-support-desk/desk/specialists.js';
import {
  type AbcdConversation,
  ANY_FLOW_CLASSIFIER,
  CASE_TRAINING_TEXTS,
  caseTrainingTexts,
  customerMessages,
  flowTexts,
  loadConversations,
  NaiveBayesClassifier,
  openingText,
  ROUTER_CLASSIFIER,
  routerTrainingTexts,
} from '@baton/support-desk-models';
import { crossValidationFolds } from '../src/folds.js';
import { scriptArgs } from './scriptArgs.js';

/** The candidate thresholds, highest first (`Infinity`: never hand back). */
const THRESHOLDS = [Number.POSITIVE_INFINITY, 0.99, 0.95, 0.9, 0.8, 0.7];
const { file } = scriptArgs('rerouteCv.ts', "Nested cross-validation of the specialists' hand-back confidence.", {});
const conversations = await loadConversations(file);
const ontology = loadOntology();

/** Per conversation: the specialist triage routes to and the second opinion (specialist, probability). */
function simulate(train: readonly AbcdConversation[], test: readonly AbcdConversation[]) {
  const router = new NaiveBayesClassifier(train.flatMap(routerTrainingTexts), {
    ...ROUTER_CLASSIFIER,
    calibrationFolds: 0,
  });
  const anyFlow = new NaiveBayesClassifier(
    flowTexts(caseTrainingTexts(train, ontology, CASE_TRAINING_TEXTS), ontology),
    ANY_FLOW_CLASSIFIER,
  );
  return test.map((c) => {
    const routed = specialistForFlow(router.classify(openingText(c))?.label ?? '');
    const bySpecialist = new Map<string, number>();
    for (const { label: flow, probability } of anyFlow.classify(customerMessages(c).join('\n'))?.probabilities ?? []) {
      const specialist = specialistForFlow(flow) ?? '';
      bySpecialist.set(specialist, (bySpecialist.get(specialist) ?? 0) + probability);
    }
    const [other, probability] = [...bySpecialist.entries()].reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
    return { truth: specialistForFlow(c.flow), routed, other, probability };
  });
}
type Simulated = ReturnType<typeof simulate>;
const rightAt = (items: Simulated, threshold: number) =>
  items.filter((s) => (s.other !== s.routed && s.probability >= threshold ? s.other : s.routed) === s.truth).length;

const outer = THRESHOLDS.map(() => 0);
let nested = 0;
const chosen: string[] = [];
for (const fold of crossValidationFolds(conversations)) {
  const inner = THRESHOLDS.map(() => 0);
  for (const { train, test } of crossValidationFolds(fold.train, 4)) {
    const simulated = simulate(train, test);
    THRESHOLDS.forEach((t, k) => {
      inner[k]! += rightAt(simulated, t);
    });
  }
  const winner = inner.indexOf(Math.max(...inner));
  chosen.push(`fold ${fold.fold}: ${THRESHOLDS[winner]} (inner ${inner.join(' / ')} of ${fold.train.length})`);
  const simulated = simulate(fold.train, fold.test);
  THRESHOLDS.forEach((t, k) => {
    outer[k]! += rightAt(simulated, t);
  });
  nested += rightAt(simulated, THRESHOLDS[winner]!);
}
const n = conversations.length;
const percent = (right: number) => `${((100 * right) / n).toFixed(1)}%`;
console.log(
  `Conversations ending with the right specialist (simulation), 5-fold cross-validation on ${n} conversations of ${file}:`,
);
console.log(
  `  ${THRESHOLDS.map((t, k) => `${t === Number.POSITIVE_INFINITY ? 'never hand back' : `hand back from ${t}`} ${percent(outer[k]!)}`).join(', ')}`,
);
console.log(
  `Chosen on the training folds only (inner 4-fold CV; thresholds in the order above):\n  ${chosen.join('\n  ')}`,
);
console.log(`The chosen threshold per fold, on the outer test folds: ${percent(nested)}`);
