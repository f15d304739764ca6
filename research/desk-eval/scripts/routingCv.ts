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
 * TF-IDF + mljs logistic regression (about a minute per training). With `--guidelines` the candidates
 * are the desk's router learning each subflow's written guideline (labelled with its flow) 0, 1, 3 or 10 times
 * (`guidelineTrainingTexts`). With `--without-identity` the candidates are the desk's router learning the
 * conversations' texts with or without the customer's names and ids (`needText`), every view read
 * without them, as triage reads the customer. With `--ensemble`, the desk's router alone or its calibrated
 * probabilities averaged with those of a words-only naive Bayes learning the same texts. With `--ngrams`, the desk's
 * router (both members) with the n-gram member's character 2–5-grams, 3–5-grams or 3–4-grams.
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/routingCv.ts [FILE] [--logistic-regression] [--guidelines] [--without-identity] [--ensemble] [--ngrams]`
 */

import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import {
  type AbcdConversation,
  AveragedClassifier,
  createTextClassifier,
  customerMessages,
  type FlowClassifier,
  GUIDELINE_COPIES,
  guidelineTrainingTexts,
  type LabelledText,
  loadConversations,
  loadGuidelines,
  type NaiveBayesOptions,
  needText,
  openingText,
  ROUTER_CLASSIFIER,
  ROUTER_WORDS_CLASSIFIER,
  type TextClassifier,
  type TextClassifierKind,
} from '@baton/support-desk-models';
import { nestedCrossValidation, percent } from './nestedCv.js';
import { scriptArgs } from './scriptArgs.js';

interface Candidate {
  name: string;
  kind: TextClassifierKind;
  options: NaiveBayesOptions;
  /** Also learn each training conversation's first message and first two messages as texts of their own. */
  prefixes?: boolean;
  /** Also learn each subflow's written guideline this many times, labelled with its flow. */
  guidelines?: number;
  /** Learn the conversations' texts less the customer's name and ids ({@link needText}), as triage reads them. */
  withoutIdentity?: boolean;
  /** Average its calibrated probabilities with those of a second naive Bayes of these options, on the same texts. */
  ensembleWith?: NaiveBayesOptions;
}
let CANDIDATES: Candidate[] = [
  { name: 'nb words', kind: 'naive-bayes', options: {} },
  {
    name: 'nb words+chars3-5 a=0.25',
    kind: 'naive-bayes',
    options: { charNgrams: { min: 3, max: 5 }, smoothing: 0.25 },
  },
  {
    name: 'nb words+chars3-5 a=0.5 counts',
    kind: 'naive-bayes',
    options: { charNgrams: { min: 3, max: 5 }, presence: false },
  },
  {
    name: 'nb words+chars2-5 a=0.25 counts',
    kind: 'naive-bayes',
    options: { charNgrams: { min: 2, max: 5 }, smoothing: 0.25, presence: false },
  },
  {
    name: 'nb words+chars2-5 a=0.5 counts',
    kind: 'naive-bayes',
    options: { charNgrams: { min: 2, max: 5 }, presence: false },
  },
  {
    name: 'nb words+chars2-5 a=0.25 counts, + prefixes',
    kind: 'naive-bayes',
    options: { charNgrams: { min: 2, max: 5 }, smoothing: 0.25, presence: false },
    prefixes: true,
  },
];
const { file, flags } = scriptArgs('routingCv.ts', "Nested cross-validation of the router's classifier.", {
  '--guidelines': 'candidates: how many times the written guidelines are learned',
  '--without-identity': 'candidates: learning texts with or without names and ids',
  '--ensemble': 'candidates: the router alone or averaged with a words-only naive Bayes',
  '--ngrams': 'candidates: character 2-5-grams or 3-5-grams',
  '--logistic-regression': 'add logistic regression to the candidates',
});
if (flags.guidelines) {
  CANDIDATES = [0, 1, 3, 10].map((copies) => ({
    name: `desk router, guidelines x${copies}`,
    kind: 'naive-bayes',
    options: ROUTER_CLASSIFIER,
    prefixes: true,
    guidelines: copies,
  }));
}
const identityFree = flags['without-identity'];
if (identityFree) {
  CANDIDATES = [false, true].map((withoutIdentity) => ({
    name: `desk router, learns texts ${withoutIdentity ? 'less' : 'with'} names and ids`,
    kind: 'naive-bayes',
    options: ROUTER_CLASSIFIER,
    prefixes: true,
    guidelines: GUIDELINE_COPIES.router,
    withoutIdentity,
  }));
}
if (flags.ensemble) {
  const desk = {
    kind: 'naive-bayes',
    options: ROUTER_CLASSIFIER,
    prefixes: true,
    guidelines: GUIDELINE_COPIES.router,
  } as const;
  CANDIDATES = [
    { name: 'desk router', ...desk },
    { name: 'desk router + nb words (binarized, a=0.5), averaged', ...desk, ensembleWith: {} },
    {
      name: 'desk router + nb words (counted, a=0.25), averaged',
      ...desk,
      ensembleWith: { smoothing: 0.25, presence: false },
    },
  ];
}
if (flags.ngrams) {
  // The desk's router as it is (both members, the guidelines, the prefixes), with the n-gram member's character range
  // as it was chosen (2-5, first: ties go to it), as the twelfth pass set it for training time (3-5), and shorter (3-4).
  const desk = {
    kind: 'naive-bayes',
    prefixes: true,
    guidelines: GUIDELINE_COPIES.router,
    ensembleWith: ROUTER_WORDS_CLASSIFIER,
  } as const;
  CANDIDATES = [
    { min: 2, max: 5 },
    { min: 3, max: 5 },
    { min: 3, max: 4 },
  ].map((charNgrams) => ({
    name: `desk router, character ${charNgrams.min}-${charNgrams.max}-grams`,
    ...desk,
    options: { ...ROUTER_CLASSIFIER, charNgrams },
  }));
}
const guidelines = loadGuidelines(loadOntology());
if (flags['logistic-regression'])
  CANDIDATES.push({ name: 'logistic-regression', kind: 'logistic-regression', options: {} });
const conversations = await loadConversations(file);
/** With `--without-identity` every view is read as triage reads it, less the customer's name and ids. */
const read = (messages: readonly string[]) => (identityFree ? needText(messages) : messages.join('\n'));
const views: Array<[string, (c: AbcdConversation) => string]> = [
  ['first message', (c) => read(customerMessages(c).slice(0, 1))],
  ['first two messages', (c) => read(customerMessages(c).slice(0, 2))],
  ['first three messages', (c) => read(customerMessages(c).slice(0, 3))],
  ['opening turns', (c) => read(openingText(c).split('\n'))],
];
/** The views the inner cross-validation scores on: the first two messages and the opening turns. */
const CHOOSING_VIEWS = [1, 3];
type Router = FlowClassifier;
const train = (candidate: Candidate, items: readonly AbcdConversation[], calibrationFolds?: number): Router =>
  candidate.ensembleWith === undefined
    ? trainOne(candidate, items, calibrationFolds)
    : // Averaging needs calibrated probabilities, also in the inner cross-validation.
      new AveragedClassifier([
        trainOne(candidate, items),
        trainOne({ ...candidate, options: { ...candidate.ensembleWith, calibrationFolds: 2 } }, items),
      ]);
const trainOne = (
  candidate: Candidate,
  items: readonly AbcdConversation[],
  calibrationFolds?: number,
): TextClassifier =>
  createTextClassifier(
    candidate.kind,
    items
      .flatMap((c): LabelledText[] => {
        const text = (messages: readonly string[]) =>
          candidate.withoutIdentity ? needText(messages) : messages.join('\n');
        return [
          { id: c.id, text: text(openingText(c).split('\n')), label: c.flow, group: c.id },
          ...(candidate.prefixes
            ? [1, 2].map((k) => ({
                id: `${c.id}-${k}`,
                text: text(customerMessages(c).slice(0, k)),
                label: c.flow,
                group: c.id,
              }))
            : []),
        ];
      })
      .concat(guidelineTrainingTexts(guidelines, 'flow', candidate.guidelines ?? 0)),
    calibrationFolds === undefined ? candidate.options : { ...candidate.options, calibrationFolds },
  );
const rightOn = (model: Router, items: readonly AbcdConversation[], view: number) =>
  items.filter((c) => model.classify(views[view]![1](c))?.label === c.flow).length;

// The inner cross-validation needs no calibration to rank.
const { outer, nestedRight, chosen, seconds } = nestedCrossValidation({
  items: conversations,
  candidates: CANDIDATES,
  views: views.length,
  choosingViews: CHOOSING_VIEWS,
  train: (candidate, items, inner) => train(candidate, items, inner ? 0 : undefined),
  rightOn,
});
const n = conversations.length;
console.log(`Flow right, 5-fold cross-validation on ${n} conversations of ${file}:`);
for (const [k, candidate] of CANDIDATES.entries()) {
  console.log(
    `  ${candidate.name}: ${views.map(([name], v) => `${name} ${percent(outer[k]![v]!, n)}`).join(', ')}; ${seconds[k]!.toFixed(2)} s per calibrated training`,
  );
}
const choices = chosen.map(
  (c) =>
    `fold ${c.fold}: ${CANDIDATES[c.winner]!.name} (inner ${c.inner.map((r) => percent(r, CHOOSING_VIEWS.length * c.trainingItems)).join(' / ')})`,
);
console.log(
  `Chosen on the training folds only (inner 4-fold CV, first two messages + opening turns; candidates in the order above):\n  ${choices.join('\n  ')}`,
);
console.log(
  `The chosen candidate per fold, on the outer test folds: ${views.map(([name], v) => `${name} ${percent(nestedRight[v]!, n)}`).join(', ')}`,
);
