/**
 * Chooses the specialists' case (subflow) classifier by nested cross-validation and prints the figures.
 * Each conversation is classified by the classifier of the specialist that covers its ABCD flow (the
 * subflows of that specialist's flows only), as the desk does once triage routed it right. For each of
 * the 5 outer folds, an inner 4-fold cross-validation on the outer training folds ONLY compares the
 * candidates (case right on everything the customer said plus right on the opening turns); the winner,
 * trained on the outer training folds, is scored on the outer test fold. Also prints each candidate's
 * outer accuracy on the opening turns, the first three messages and the whole customer side, and its
 * training time (six specialists' classifiers). The candidates: the desk's first case classifier (words
 * and word pairs, binarized, smoothing 0.5), the router's features (words and their character 2–5-grams,
 * counted, smoothing 0.25), and the router's features learning besides the whole customer side the
 * opening turns, or each customer message, as texts of their own. With `--guidelines` the candidates are
 * the desk's case classifiers learning each subflow's written guideline 0, 1, 3 or 10 times (`guidelineTrainingTexts`).
 * With `--case-messages` the candidates are the desk's case classifiers (as `createOfflineModels` trains them,
 * uncalibrated) reading the customer's words up to their first 1, 2, 3, 4, 5, 6 or 8 messages that say anything,
 * or all of them (`caseText`), less their name and ids as the specialists read them; the one view scored and chosen
 * on is that text. With both flags, each of those readings with the guidelines learned 3, 6 or 10 times.
 * With `--svm` the candidates are the naive Bayes the case classifiers were until the eleventh pass and one-vs-rest linear SVMs
 * (`LinearSvmClassifier`) at a few settings of lambda and epochs, all learning and reading as the desk does
 * (guidelines x3, `caseText` of the first {@link CASE_MESSAGES} saying messages).
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/caseCv.ts [FILE] [--guidelines] [--case-messages] [--svm]`
 */

import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { SPECIALISTS, specialistForFlow } from '@baton/example-support-desk/desk/specialists.js';
import {
  type AbcdConversation,
  CASE_CLASSIFIER,
  CASE_CLASSIFIER_KIND,
  CASE_MESSAGES,
  CASE_TRAINING_TEXTS,
  type CaseTrainingTexts,
  caseText,
  caseTrainingTexts,
  createTextClassifier,
  customerMessages,
  extractSlots,
  GUIDELINE_COPIES,
  guidelineTrainingTexts,
  loadConversations,
  loadGuidelines,
  type NaiveBayesOptions,
  openingText,
  type SlotValues,
  type TextClassifier,
  type TextClassifierKind,
} from '@baton/support-desk-models';
import { nestedCrossValidation, percent } from './nestedCv.js';
import { scriptArgs } from './scriptArgs.js';

interface Candidate {
  name: string;
  /** The classifier's kind (default naive Bayes). */
  kind?: TextClassifierKind;
  options: NaiveBayesOptions;
  texts: CaseTrainingTexts;
  /** Also learn each subflow's written guideline this many times. */
  guidelines?: number;
  /** With `--case-messages`: how many saying messages the specialist reads (`caseText`; `undefined`: all). */
  reads?: number | undefined;
}
const ROUTER_FEATURES: NaiveBayesOptions = { charNgrams: { min: 2, max: 5 }, smoothing: 0.25, presence: false };
let CANDIDATES: Candidate[] = [
  { name: 'nb words+pairs a=0.5 binarized, whole', options: {}, texts: 'whole' },
  { name: 'nb words+pairs a=0.25 binarized, whole', options: { smoothing: 0.25 }, texts: 'whole' },
  { name: 'nb words+pairs a=1 binarized, whole', options: { smoothing: 1 }, texts: 'whole' },
  { name: 'nb words+pairs a=0.5 counts, whole', options: { presence: false }, texts: 'whole' },
  { name: 'nb words+pairs a=0.5 binarized, whole + opening', options: {}, texts: 'whole+opening' },
  { name: 'nb words+chars2-5 a=0.25 counts, whole', options: ROUTER_FEATURES, texts: 'whole' },
  { name: 'nb words+chars2-5 a=0.5 binarized, whole', options: { charNgrams: { min: 2, max: 5 } }, texts: 'whole' },
  { name: 'nb words+chars2-5 a=0.25 counts, whole + opening', options: ROUTER_FEATURES, texts: 'whole+opening' },
  { name: 'nb words+chars2-5 a=0.25 counts, whole + each message', options: ROUTER_FEATURES, texts: 'whole+each' },
];
const { file, flags } = scriptArgs('caseCv.ts', "Nested cross-validation of the specialists' case classifiers.", {
  '--guidelines': 'candidates: how many times the written guidelines are learned',
  '--svm': "candidates: the desk's naive Bayes against linear SVMs (implies --case-messages)",
  '--case-messages': "candidates: how many of the customer's messages the case is read from",
});
if (flags.guidelines) {
  CANDIDATES = [0, 1, 3, 10].map((copies) => ({
    name: `desk case classifiers, guidelines x${copies}`,
    kind: CASE_CLASSIFIER_KIND,
    options: CASE_CLASSIFIER,
    texts: CASE_TRAINING_TEXTS,
    guidelines: copies,
  }));
}
const svm = flags.svm;
const byMessages = flags['case-messages'] || svm;
if (svm) {
  // The desk's case classifiers (naive Bayes) against one-vs-rest linear SVMs, all reading and learning as the desk does.
  const desk = { texts: CASE_TRAINING_TEXTS, guidelines: GUIDELINE_COPIES.cases, reads: CASE_MESSAGES };
  CANDIDATES = [
    // The naive Bayes the case classifiers were before the linear SVM: the hand-back flow classifier's settings.
    { name: 'naive Bayes (words+pairs a=0.5 binarized)', kind: 'naive-bayes', options: {}, ...desk },
    ...(
      [
        [0.03, 3],
        [0.1, 3],
        [0.03, 5],
        [0.03, 10],
      ] as const
    ).map(([lambda, epochs]) => ({
      name: `linear SVM lambda=${lambda} ${epochs} epochs`,
      kind: 'linear-svm' as const,
      options: { lambda, epochs },
      ...desk,
    })),
  ];
} else if (byMessages) {
  // With `--guidelines` too: every reading with the guidelines learned 3, 6 or 10 times.
  const copies = flags.guidelines ? [3, 6, 10] : [GUIDELINE_COPIES.cases];
  CANDIDATES = copies.flatMap((guidelines) =>
    [1, 2, 3, 4, 5, 6, 8, undefined].map((reads) => ({
      name: `desk case classifiers${copies.length > 1 ? `, guidelines x${guidelines},` : ''} reading ${reads === undefined ? 'all messages' : `up to ${reads} saying message(s)`}`,
      kind: CASE_CLASSIFIER_KIND,
      options: CASE_CLASSIFIER,
      texts: CASE_TRAINING_TEXTS,
      guidelines,
      reads,
    })),
  );
}
const conversations = await loadConversations(file);
const ontology = loadOntology();
const guidelines = loadGuidelines(ontology);
/** A conversation's text as a view reads it (`reads`: the candidate's, with `--case-messages`). */
type View = (c: AbcdConversation, reads: number | undefined) => string;
/** The slots the customer's messages hold, as a specialist hears them (their name and ids are left out of `caseText`). */
function slotsOf(c: AbcdConversation): SlotValues {
  const slots: SlotValues = {};
  for (const message of customerMessages(c))
    for (const [slot, value] of Object.entries(extractSlots(message))) if (value !== undefined) slots[slot] = value;
  return slots;
}
const views: Array<[string, View]> = byMessages
  ? [['what the specialist reads', (c, reads) => caseText(customerMessages(c), slotsOf(c), reads)]]
  : [
      ['opening turns', openingText],
      ['first three messages', (c) => customerMessages(c).slice(0, 3).join('\n')],
      ['whole customer side', (c) => customerMessages(c).join('\n')],
    ];
/** The views the inner cross-validation scores on: the opening turns and the whole customer side (with `--case-messages`, its one view). */
const CHOOSING_VIEWS = byMessages ? [0] : [0, 2];

/** One classifier per specialist, as `createOfflineModels` builds them, and what they read. */
interface CaseModels {
  classifiers: Map<string, TextClassifier>;
  reads: number | undefined;
}
function train(candidate: Candidate, items: readonly AbcdConversation[]): CaseModels {
  const examples = [
    ...caseTrainingTexts(items, ontology, candidate.texts),
    ...guidelineTrainingTexts(guidelines, 'subflow', candidate.guidelines ?? 0),
  ];
  const classifiers = new Map(
    SPECIALISTS.map((spec) => {
      const labels = spec.flows.flatMap((flow) => ontology.subflows[flow] ?? []);
      return [
        spec.name,
        createTextClassifier(candidate.kind ?? 'naive-bayes', examples, {
          ...candidate.options,
          labels,
          calibrationFolds: 0,
        }),
      ] as const;
    }),
  );
  return { classifiers, reads: candidate.reads };
}
const rightOn = (models: CaseModels, items: readonly AbcdConversation[], view: number) =>
  items.filter(
    (c) =>
      models.classifiers.get(specialistForFlow(c.flow) ?? '')?.classify(views[view]![1](c, models.reads))?.label ===
      c.subflow,
  ).length;

const { outer, nestedRight, chosen, seconds } = nestedCrossValidation({
  items: conversations,
  candidates: CANDIDATES,
  views: views.length,
  choosingViews: CHOOSING_VIEWS,
  train,
  rightOn,
});
const n = conversations.length;
console.log(`Case right within the right specialist, 5-fold cross-validation on ${n} conversations of ${file}:`);
for (const [k, candidate] of CANDIDATES.entries()) {
  console.log(
    `  ${candidate.name}: ${views.map(([name], v) => `${name} ${percent(outer[k]![v]!, n)}`).join(', ')}; ${seconds[k]!.toFixed(2)} s per training`,
  );
}
const choices = chosen.map(
  (c) =>
    `fold ${c.fold}: ${CANDIDATES[c.winner]!.name} (inner ${c.inner.map((r) => percent(r, CHOOSING_VIEWS.length * c.trainingItems)).join(' / ')})`,
);
console.log(
  `Chosen on the training folds only (inner 4-fold CV, ${CHOOSING_VIEWS.map((v) => views[v]![0]).join(' + ')}; candidates in the order above):\n  ${choices.join('\n  ')}`,
);
// The desk needs one setting: the candidate whose inner right counts, summed over the five folds, are highest.
const summed = CANDIDATES.map((_, k) => chosen.reduce((sum, c) => sum + c.inner[k]!, 0));
const ranked = CANDIDATES.map((candidate, k) => ({ name: candidate.name, right: summed[k]! })).sort(
  (a, b) => b.right - a.right,
);
console.log(
  `Summed over the folds' inner cross-validations (right, of ${chosen.reduce((sum, c) => sum + CHOOSING_VIEWS.length * c.trainingItems, 0)}): ${ranked.map((r) => `${r.name} ${r.right}`).join(', ')}`,
);
console.log(
  `The chosen candidate per fold, on the outer test folds: ${views.map(([name], v) => `${name} ${percent(nestedRight[v]!, n)}`).join(', ')}`,
);
