import { ConfigurationError, type ModelClient } from '@baton/core';
import { type AbcdConversation, customerMessages, openingText } from './abcdData.js';
import { AbcdPolicyModel } from './abcdPolicyModel.js';
import { AbcdRouterModel, triageText, withoutIdentity } from './abcdRouterModel.js';
import { AveragedClassifier } from './averagedClassifier.js';
import { type Guideline, guidelineText, loadGuidelines } from './guidelines.js';
import type { Ontology } from './ontology.js';
import { extractSlots, type SlotValues } from './slotExtraction.js';
import {
  createTextClassifier,
  type LabelledText,
  type LinearSvmClassifier,
  NaiveBayesClassifier,
  type NaiveBayesOptions,
  type TextClassifierKind,
} from './textClassifier.js';
import { hasContent } from './textFeatures.js';

/** A specialist as the offline models see it: its agent name and the ABCD flows it covers (every flow exactly one's). */
export interface OfflineSpecialist {
  name: string;
  flows: readonly string[];
}

/** The offline models: the coordinator's and one per specialist (the desk's `DeskModels`). */
export interface OfflineModels {
  /** The triage coordinator's model. */
  triage: ModelClient;
  /**
   * The model of the specialist named `name`.
   * @throws {ConfigurationError} for a name it has no model for
   */
  specialist(name: string): ModelClient;
}

/**
 * The router's naive Bayes settings: words and their character 3–5-grams, counted, smoothing 0.25 (chosen by nested
 * cross-validation on the training folds, `scripts/routingCv.ts`, with 2–5-grams; the 2-grams were dropped in the
 * twelfth pass for training time, the replay's figures unchanged or better, and `routingCv.ts --ngrams` ties the two);
 * calibrated on 150 held-out texts of one of 2 folds.
 */
export const ROUTER_CLASSIFIER: NaiveBayesOptions = {
  charNgrams: { min: 3, max: 5 },
  smoothing: 0.25,
  presence: false,
  calibrationFolds: 2,
  calibrationTexts: 150,
};

/**
 * The second naive Bayes of the router's ensemble ({@link createRouterClassifier}): words only, binarized,
 * smoothing 0.5, calibrated on 2 folds; chosen by nested cross-validation (`scripts/routingCv.ts --ensemble`).
 */
export const ROUTER_WORDS_CLASSIFIER: NaiveBayesOptions = { calibrationFolds: 2 };

/**
 * The router's classifier: the calibrated probabilities of a naive Bayes on words and character n-grams
 * ({@link ROUTER_CLASSIFIER}) and of one on words alone ({@link ROUTER_WORDS_CLASSIFIER}), averaged.
 *
 * @param texts what it learns ({@link routerTrainingTexts}, {@link guidelineTrainingTexts})
 * @throws {InvalidInputError} when the texts hold 2 labels or more but fewer than 10 distinct features
 */
export function createRouterClassifier(texts: readonly LabelledText[]): AveragedClassifier {
  return new AveragedClassifier([
    new NaiveBayesClassifier(texts, ROUTER_CLASSIFIER),
    new NaiveBayesClassifier(texts, ROUTER_WORDS_CLASSIFIER),
  ]);
}

/**
 * Customer messages as triage reads them: joined by newlines, less the customer's name and ids that
 * {@link extractSlots} finds in any of them ({@link withoutIdentity}), as the router does with the
 * slots of the conversation so far.
 *
 * @param messages the customer's messages, in order
 * @returns the text triage classifies (`''` for no messages)
 * @example
 * ```ts
 * needText(['hi, I am Joyce Wu', 'my promo code does not work']); // 'hi, I am  \nmy promo code does not work'
 * ```
 */
export function needText(messages: readonly string[]): string {
  const slots: SlotValues = {};
  for (const message of messages)
    for (const [slot, value] of Object.entries(extractSlots(message))) if (value !== undefined) slots[slot] = value;
  return withoutIdentity(messages.join('\n'), slots);
}

/**
 * Customer messages as triage classifies them ({@link triageText}: those that say anything about the need, less the
 * name and ids that {@link extractSlots} finds in any of them), as the router does with the slots of the conversation
 * so far.
 *
 * @param messages the customer's messages, in order
 * @example
 * ```ts
 * triageReading(['my promo code does not work', 'Joyce Wu, account ID QW12ER34TY']); // 'my promo code does not work'
 * ```
 */
export function triageReading(messages: readonly string[]): string {
  const slots: SlotValues = {};
  for (const message of messages)
    for (const [slot, value] of Object.entries(extractSlots(message))) if (value !== undefined) slots[slot] = value;
  return triageText(messages, slots);
}

/**
 * Below this confidence triage, once the customer has given their name or account, asks which of its two likeliest
 * topics the need is about before it routes (the router's `clarifyBelow`; its route-at-once confidence, 0.8): chosen,
 * with the reading {@link triageText}, by nested cross-validation of the desk's router on the recorded messages
 * (`scripts/triageReadCv.ts --clarify`: the candidate whose inner scores, summed over the five folds, ranked first).
 */
export const TRIAGE_CLARIFY_BELOW = 0.8;

/**
 * What the router learns from a conversation: its opening turns ({@link openingText}), and its first
 * message and first two messages as texts of their own, so that it also knows what a need looks like
 * before the customer has said all of it (triage decides after each message). Chosen by nested
 * cross-validation (`scripts/routingCv.ts`).
 */
export function routerTrainingTexts(conversation: AbcdConversation): LabelledText[] {
  const messages = customerMessages(conversation);
  return [
    { id: conversation.id, text: openingText(conversation), label: conversation.flow, group: conversation.id },
    ...[1, 2].map((count) => ({
      id: `${conversation.id}-first-${count}`,
      text: messages.slice(0, count).join('\n'),
      label: conversation.flow,
      group: conversation.id,
    })),
  ];
}

/**
 * How many times the router and the case classifiers learn each subflow's written guideline
 * ({@link guidelineTrainingTexts}); 0: not at all. `router`: labelled with the flow; `cases`: with the
 * subflow. Chosen by nested cross-validation (`scripts/routingCv.ts`, `scripts/caseCv.ts`).
 */
export const GUIDELINE_COPIES = { router: 3, cases: 3 } as const;

/**
 * ABCD's written guidelines as training texts ({@link guidelineText}: the flow's title and description,
 * the subflow's title and instructions), each `copies` times, labelled with the flow or the subflow.
 * They are learned, never held out to fit the calibration (`calibrate: false`): a case with few
 * conversations is still described.
 *
 * @param guidelines from {@link loadGuidelines}
 * @param label `'flow'` for the router, `'subflow'` for the case classifiers
 * @param copies how many times each is learned (0: none)
 * @example
 * ```ts
 * guidelineTrainingTexts(loadGuidelines(ontology), 'flow', 1).length; // 55
 * ```
 */
export function guidelineTrainingTexts(
  guidelines: readonly Guideline[],
  label: 'flow' | 'subflow',
  copies: number,
): LabelledText[] {
  return guidelines.flatMap((guideline) =>
    Array.from({ length: copies }, (_, i) => ({
      id: `guideline-${guideline.subflow}-${i}`,
      text: guidelineText(guideline),
      label: guideline[label],
      calibrate: false,
    })),
  );
}

/**
 * The specialists' case (subflow) classifiers' kind: one-vs-rest linear SVMs on TF-IDF ({@link LinearSvmClassifier}),
 * chosen over the desk's naive Bayes by nested cross-validation (`scripts/caseCv.ts --svm`).
 */
export const CASE_CLASSIFIER_KIND: TextClassifierKind = 'linear-svm';

/**
 * The specialists' case (subflow) classifiers' settings ({@link CASE_CLASSIFIER_KIND}): regularisation λ 0.03, 5 passes
 * over the training texts, calibrated on about 100 held-out texts of 2 folds (one fold when it holds that many). λ chosen
 * by nested cross-validation (`scripts/caseCv.ts --svm`); 5 passes, not the 10 that ranked first there, 2 calibration
 * folds, not 3, and 100 held-out texts, for training time (`scripts/trainingTime.ts`; with 3 folds the repeated
 * cross-validation's case mean was 308.2 of 400, with 2 it was 307.6: the same within its spread).
 */
export const CASE_CLASSIFIER: NaiveBayesOptions = {
  calibrationFolds: 2,
  calibrationTexts: 100,
  lambda: 0.03,
  epochs: 5,
};

/**
 * The classifier of every flow a specialist hands a customer back with (the case classifiers' texts labelled with their
 * case's flow, see {@link flowTexts}): the naive Bayes the case classifiers were before the linear SVM (words and word
 * pairs, binarized, smoothing 0.5, calibrated on 3 folds). It reads the same texts as the case
 * classifiers but names one of 10 flows, not one of 55 cases: the hand-back only asks whose flow the customer's
 * words are, and wink's scoring costs labels² × features per text. Its temperature is fitted on about 50
 * held-out texts, as when it named the 55 cases (kept, not chosen again on the figures).
 */
export const ANY_FLOW_CLASSIFIER: NaiveBayesOptions = { calibrationFolds: 3, calibrationTexts: 50 };

/**
 * Case training texts relabelled with their case's flow (a text whose label is not a case keeps it).
 *
 * @param texts labelled with subflows ({@link caseTrainingTexts}, {@link guidelineTrainingTexts} with `'subflow'`)
 * @example
 * ```ts
 * flowTexts([{ id: 'a', text: 'I forgot my password', label: 'recover_password' }], ontology)[0]!.label; // 'account_access'
 * ```
 */
export function flowTexts(texts: readonly LabelledText[], ontology: Ontology): LabelledText[] {
  return texts.map((text) => ({ ...text, label: ontology.flowOf(text.label) ?? text.label }));
}

/**
 * Which texts of a conversation a case classifier learns: everything the customer said (`whole`),
 * and besides it the opening turns (`whole+opening`, {@link openingText}) or each customer message
 * with a content word (`whole+each`).
 */
export type CaseTrainingTexts = 'whole' | 'whole+opening' | 'whole+each';

/**
 * How many of the customer's messages that say anything a specialist recognises the case from (`caseText`): the
 * messages after them mostly answer questions (an order ID, a membership level, "yes") and blur the case. Chosen
 * by nested cross-validation (`scripts/caseCv.ts --case-messages`: the setting whose inner scores, summed over the
 * five folds, ranked first).
 */
export const CASE_MESSAGES = 4;

/** The training texts the desk's case classifiers learn ({@link caseTrainingTexts}). */
export const CASE_TRAINING_TEXTS: CaseTrainingTexts = 'whole';

/**
 * What the specialists' case classifiers learn, labelled with the subflow: the conversations' texts
 * (`texts`, see {@link CaseTrainingTexts}), and each case's name in words, its flow's and its own
 * ("account access recover username"), three times: what the knowledge base calls it, so that a case
 * with few conversations is still recognised.
 *
 * @param training the conversations learned from
 * @example
 * ```ts
 * const examples = caseTrainingTexts(training, loadOntology(), 'whole');
 * ```
 */
export function caseTrainingTexts(
  training: readonly AbcdConversation[],
  ontology: Ontology,
  texts: CaseTrainingTexts,
): LabelledText[] {
  const names = Object.entries(ontology.subflows).flatMap(([flow, subflows]) =>
    subflows.flatMap((subflow) =>
      [0, 1, 2].map((i) => ({
        id: `name-${subflow}-${i}`,
        text: `${flow} ${subflow}`.replace(/_/g, ' '),
        label: subflow,
      })),
    ),
  );
  return [
    ...training.flatMap((c) => {
      const messages = customerMessages(c);
      const whole = { id: c.id, text: messages.join('\n'), label: c.subflow, group: c.id };
      if (texts === 'whole+opening')
        return [whole, { id: `${c.id}-opening`, text: openingText(c), label: c.subflow, group: c.id }];
      if (texts === 'whole+each') {
        return [
          whole,
          ...messages.flatMap((text, i) =>
            hasContent(text) ? [{ id: `${c.id}-${i}`, text, label: c.subflow, group: c.id }] : [],
          ),
        ];
      }
      return [whole];
    }),
    ...names,
  ];
}

/**
 * The desk's router classifier ({@link createRouterClassifier}) learned as {@link createOfflineModels} learns it: each
 * conversation's {@link routerTrainingTexts} and the written guidelines, {@link GUIDELINE_COPIES}`.router` times each.
 *
 * @param training the conversations it learns from
 * @param guidelines from {@link loadGuidelines}
 * @throws {InvalidInputError} when the texts hold 2 labels or more but fewer than 10 distinct features
 * @example
 * ```ts
 * trainRouterClassifier(conversations, loadGuidelines(ontology)).classify('I was charged twice')?.label; // 'purchase_dispute'
 * ```
 */
export function trainRouterClassifier(
  training: readonly AbcdConversation[],
  guidelines: readonly Guideline[],
): AveragedClassifier {
  return createRouterClassifier([
    ...training.flatMap(routerTrainingTexts),
    ...guidelineTrainingTexts(guidelines, 'flow', GUIDELINE_COPIES.router),
  ]);
}

/**
 * The offline models, learned from `training` conversations only: the router (flows) and, per
 * specialist, a policy whose subflow classifier knows only that specialist's flows.
 *
 * @param training the conversations the models learn from (never the ones they are evaluated on)
 * @param ontology ABCD's flows, subflows, actions and action sequences
 * @param specialists who covers which flows (the router hands off to them, a specialist hands back to `triage`)
 * @param guidelines the written guidelines they also learn ({@link GUIDELINE_COPIES}; default ABCD's, {@link loadGuidelines})
 * @throws {InvalidInputError} when the guidelines file does not match the ontology (see {@link loadGuidelines})
 * @example
 * ```ts
 * const models = createOfflineModels(trainingConversations, loadOntology(), SPECIALISTS);
 * await models.triage.generate(request);
 * ```
 */
export function createOfflineModels(
  training: readonly AbcdConversation[],
  ontology: Ontology,
  specialists: readonly OfflineSpecialist[],
  guidelines: readonly Guideline[] = loadGuidelines(ontology),
): OfflineModels {
  const byFlow = new Map(specialists.flatMap((spec) => spec.flows.map((flow) => [flow, spec.name] as const)));
  const specialistForFlow = (flow: string) => byFlow.get(flow);
  // Triage routes on the opening turns; a specialist recognises the case from the customer's first messages that say anything (CASE_MESSAGES).
  const router = new AbcdRouterModel({
    classifier: trainRouterClassifier(training, guidelines),
    specialistFor: specialistForFlow,
    flows: ontology.flows,
    clarifyBelow: TRIAGE_CLARIFY_BELOW,
  });
  const bySubflow = [
    ...caseTrainingTexts(training, ontology, CASE_TRAINING_TEXTS),
    ...guidelineTrainingTexts(guidelines, 'subflow', GUIDELINE_COPIES.cases),
  ];
  // Every flow, calibrated: a specialist hands back a customer whose words say another specialist's flow.
  const anyFlow = new NaiveBayesClassifier(flowTexts(bySubflow, ontology), ANY_FLOW_CLASSIFIER);
  const policies = new Map(
    specialists.map((spec) => {
      const subflows = spec.flows.flatMap((flow) => ontology.subflows[flow] ?? []);
      // Calibrated, so that the flow triage named (with its confidence) weighs against the customer's words (`withFlowPrior`).
      const classifier = createTextClassifier(CASE_CLASSIFIER_KIND, bySubflow, {
        ...CASE_CLASSIFIER,
        labels: subflows,
      });
      return [
        spec.name,
        new AbcdPolicyModel({
          agent: spec.name,
          classifier,
          ontology,
          anyFlow,
          specialistFor: specialistForFlow,
          caseMessages: CASE_MESSAGES,
        }),
      ] as const;
    }),
  );
  return {
    triage: router,
    specialist: (name) => {
      const model = policies.get(name);
      if (model === undefined)
        throw new ConfigurationError(
          `No offline policy for specialist ${JSON.stringify(name)}; known: ${[...policies.keys()].join(', ')}.`,
        );
      return model;
    },
  };
}
