/**
 * Chooses how much of the opening triage gathers before it routes, by nested cross-validation of a
 * simulation of its policy: after each customer message it classifies everything the customer said
 * so far as triage reads it (`triageReading`: the messages about the need, less the name and ids), with the desk's router classifier
 * (`createRouterClassifier`: two calibrated naive Bayes, averaged) and routes at once when its confidence reaches
 * `routeConfidence`, otherwise asks one more question (whose answer is the customer's next message),
 * at most `maxQuestions`, then up to `maxQuestionsTorn` more while its confidence is below 0.5 (then it
 * routes on its best guess). Its questions are of no kind: the desk's router asks the name once and routes after it unless
 * still torn (or below its `clarifyBelow`), which `triageReadCv.ts` simulates exactly by running the router itself. The classifier learns what the desk's router learns (the conversations'
 * texts and the written guidelines, `GUIDELINE_COPIES.router` times). For each of the 5 outer folds, an inner
 * 4-fold cross-validation on the outer training folds ONLY picks the settings with the most flows
 * right (ties: fewer questions); the pick is scored on the outer test fold. Prints each setting's
 * outer flow accuracy and questions per conversation, and the nested figure.
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/triageCv.ts [FILE]`
 */

import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import type { Classification, FlowClassifier } from '@baton/support-desk-models';
import {
  type AbcdConversation,
  createRouterClassifier,
  customerMessages,
  GUIDELINE_COPIES,
  guidelineTrainingTexts,
  loadConversations,
  loadGuidelines,
  routerTrainingTexts,
  triageReading,
} from '@baton/support-desk-models';
import { nestedTriageChoice } from './nestedTriageChoice.js';
import { scriptArgs } from './scriptArgs.js';

interface Setting {
  routeConfidence: number;
  maxQuestions: number;
  /** Questions beyond `maxQuestions` while the confidence is below {@link TORN}. */
  maxQuestionsTorn: number;
}
/** The confidence below which triage is torn (the router's `minConfidence`, set before measuring). */
const TORN = 0.5;
const SETTINGS: Setting[] = [0.7, 0.8, 0.9, 0.95, 1.01].flatMap((routeConfidence) =>
  [1, 2, 3].flatMap((maxQuestions) =>
    [0, 1, 2].map((maxQuestionsTorn) => ({ routeConfidence, maxQuestions, maxQuestionsTorn })),
  ),
);
const name = (s: Setting) =>
  `route at ${s.routeConfidence > 1 ? 'never at once' : s.routeConfidence.toFixed(2)}, at most ${s.maxQuestions} question(s)${s.maxQuestionsTorn > 0 ? ` + ${s.maxQuestionsTorn} when torn` : ''}`;

/** Every setting reads the same classifications: each is computed once per classifier. */
const cache = new WeakMap<FlowClassifier, Map<string, Classification | undefined>>();
function classify(classifier: FlowClassifier, text: string): Classification | undefined {
  const known = cache.get(classifier) ?? new Map<string, Classification | undefined>();
  cache.set(classifier, known);
  if (!known.has(text)) known.set(text, classifier.classify(text));
  return known.get(text);
}

/** Triage's simulated decision on one conversation: the flow it routes to (`undefined`: none before the customer's messages ran out) and the questions it asked. */
function simulate(
  classifier: FlowClassifier,
  conversation: AbcdConversation,
  setting: Setting,
): { flow: string | undefined; questions: number } {
  const messages = customerMessages(conversation);
  let questions = 0;
  for (let heard = 1; heard <= messages.length; heard += 1) {
    const result = classify(classifier, triageReading(messages.slice(0, heard)));
    const torn =
      result !== undefined &&
      result.confidence < TORN &&
      questions >= 1 &&
      questions < setting.maxQuestions + setting.maxQuestionsTorn;
    if (
      result !== undefined &&
      (result.confidence >= setting.routeConfidence || (questions >= setting.maxQuestions && !torn))
    )
      return { flow: result.label, questions };
    if (result === undefined && questions > setting.maxQuestions) return { flow: undefined, questions };
    questions += 1;
  }
  return { flow: undefined, questions };
}

const { file } = scriptArgs(
  'triageCv.ts',
  'Nested cross-validation of the confidence at which triage routes at once.',
  {},
);
const conversations = await loadConversations(file);
const guidelines = guidelineTrainingTexts(loadGuidelines(loadOntology()), 'flow', GUIDELINE_COPIES.router);
const train = (items: readonly AbcdConversation[]) =>
  createRouterClassifier([...items.flatMap(routerTrainingTexts), ...guidelines]);

const { outer, folds, nested } = nestedTriageChoice(conversations, SETTINGS, train, simulate);
const chosen = folds.map(
  (f) =>
    `fold ${f.fold}: ${name(SETTINGS[f.chosen]!)} (inner ${((100 * f.inner[f.chosen]!.right) / f.trainingSize).toFixed(1)}%)`,
);
const n = conversations.length;
const line = (s: { right: number; questions: number }) =>
  `flow ${((100 * s.right) / n).toFixed(1)}%, ${(s.questions / n).toFixed(2)} questions per conversation`;
console.log(`Triage's policy simulated, 5-fold cross-validation on ${n} conversations of ${file}:`);
for (const [i, setting] of SETTINGS.entries()) console.log(`  ${name(setting)}: ${line(outer[i]!)}`);
console.log(`Chosen on the training folds only (inner 4-fold CV):\n  ${chosen.join('\n  ')}`);
console.log(`The chosen setting per fold, on the outer test folds: ${line(nested)}`);
