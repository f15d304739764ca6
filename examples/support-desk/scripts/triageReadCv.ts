/**
 * Chooses what triage reads of the customer's opening by nested cross-validation of a simulation of its
 * policy (the desk's: route at once from 0.8, at most two questions, one more while torn below 0.5; the
 * desk's router classifier, `createRouterClassifier`, learning what the desk's router learns). Each
 * candidate is a reading: which of the messages heard so far triage classifies, less the customer's name and
 * ids (`needText`). For each of the 5 outer folds an inner 4-fold cross-validation on the outer training
 * folds ONLY ranks the readings (flows right); the winner is scored on the outer test fold. Prints each
 * reading's outer flow accuracy and questions per conversation, the choice per fold, the inner right counts
 * summed over the folds, and the nested figure.
 *
 * `npx tsx --conditions=source examples/support-desk/scripts/triageReadCv.ts [FILE]`
 */
import { type AbcdConversation, customerMessages, loadConversations } from '../src/data/abcdData.js';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';
import { crossValidationFolds } from '../src/data/folds.js';
import { loadGuidelines } from '../src/data/guidelines.js';
import { loadOntology } from '../src/data/ontology.js';
import { createRouterClassifier, GUIDELINE_COPIES, guidelineTrainingTexts, needText, routerTrainingTexts, triageReading } from '../src/desk/deskModels.js';
import type { FlowClassifier } from '../src/models/averagedClassifier.js';
import type { Classification } from '../src/models/textClassifier.js';
import { hasContent } from '../src/models/textFeatures.js';

type Classify = (text: string) => Classification | undefined;
interface Reading {
  name: string;
  /** Triage's classification after hearing `messages` (the customer's messages so far). */
  read: (classify: Classify, messages: readonly string[]) => Classification | undefined;
  /** The router learns its texts as triage reads them ({@link triageReading}) instead of as said. */
  learnAsRead?: boolean;
}
/** The messages that say anything once the customer's name and ids are left out. */
const saying = (messages: readonly string[]) => {
  const kept = messages.filter((m) => hasContent(needText([m])));
  return kept.length > 0 ? kept : messages.slice(0, 1);
};
const READINGS: Reading[] = [
  { name: 'everything so far (the desk before)', read: (classify, m) => classify(needText(m)) },
  { name: 'the messages that say anything', read: (classify, m) => classify(needText(saying(m))) },
  ...[2, 3].map((k) => ({ name: `the first ${k} messages that say anything`, read: (classify: Classify, m: readonly string[]) => classify(needText(saying(m).slice(0, k))) })),
  {
    name: 'the messages that say anything, the surest prefix',
    read: (classify: Classify, m: readonly string[]) =>
      m.map((_, i) => classify(needText(saying(m.slice(0, i + 1))))).reduce<Classification | undefined>((best, r) => (r !== undefined && (best === undefined || r.confidence > best.confidence) ? r : best), undefined),
  },
  {
    name: 'the messages that say anything besides who the customer is (triageReading)',
    read: (classify: Classify, m: readonly string[]) => classify(triageReading(m)),
  },
  {
    name: 'the messages that say anything besides who the customer is, the surest prefix',
    read: (classify: Classify, m: readonly string[]) =>
      m.map((_, i) => classify(triageReading(m.slice(0, i + 1)))).reduce<Classification | undefined>((best, r) => (r !== undefined && (best === undefined || r.confidence > best.confidence) ? r : best), undefined),
  },
  {
    name: 'triageReading, learning the texts as read',
    read: (classify: Classify, m: readonly string[]) => classify(triageReading(m)),
    learnAsRead: true,
  },
  {
    name: 'everything so far, the surest prefix once out of questions',
    read: (classify: Classify, m: readonly string[]) =>
      m.map((_, i) => classify(needText(m.slice(0, i + 1)))).reduce<Classification | undefined>((best, r) => (r !== undefined && (best === undefined || r.confidence > best.confidence) ? r : best), undefined),
  },
];
const TORN = 0.5;
const ROUTE = 0.8;
const MAX_QUESTIONS = 2;
const MAX_TORN = 1;

function simulate(classify: Classify, conversation: AbcdConversation, reading: Reading): { flow: string | undefined; questions: number } {
  const messages = customerMessages(conversation);
  let questions = 0;
  for (let heard = 1; heard <= messages.length; heard += 1) {
    const result = reading.read(classify, messages.slice(0, heard));
    const torn = result !== undefined && result.confidence < TORN && questions >= 1 && questions < MAX_QUESTIONS + MAX_TORN;
    if (result !== undefined && (result.confidence >= ROUTE || (questions >= MAX_QUESTIONS && !torn))) return { flow: result.label, questions };
    if (result === undefined && questions > MAX_QUESTIONS) return { flow: undefined, questions };
    questions += 1;
  }
  return { flow: undefined, questions };
}

const file = process.argv[2] ?? DEMO_DATA_FILE;
const conversations = await loadConversations(file);
const guidelines = guidelineTrainingTexts(loadGuidelines(loadOntology()), 'flow', GUIDELINE_COPIES.router);
const train = (items: readonly AbcdConversation[], learnAsRead: boolean): Classify => {
  const texts = items.flatMap(routerTrainingTexts).map((t) => (learnAsRead ? { ...t, text: triageReading(t.text.split('\n')) } : t));
  const classifier: FlowClassifier = createRouterClassifier([...texts, ...guidelines]);
  const known = new Map<string, Classification | undefined>();
  return (text) => {
    if (!known.has(text)) known.set(text, classifier.classify(text));
    return known.get(text);
  };
};
/** One classifier per training set and way of learning, shared by the readings. */
const trainer = (items: readonly AbcdConversation[]) => {
  const made = new Map<boolean, Classify>();
  return (reading: Reading) => {
    const learnAsRead = reading.learnAsRead ?? false;
    if (!made.has(learnAsRead)) made.set(learnAsRead, train(items, learnAsRead));
    return made.get(learnAsRead)!;
  };
};
const score = (classify: Classify, items: readonly AbcdConversation[], reading: Reading) =>
  items.reduce(
    (sum, c) => {
      const { flow, questions } = simulate(classify, c, reading);
      return { right: sum.right + (flow === c.flow ? 1 : 0), questions: sum.questions + questions };
    },
    { right: 0, questions: 0 },
  );

const outer = READINGS.map(() => ({ right: 0, questions: 0 }));
const summed = READINGS.map(() => 0);
const nested = { right: 0, questions: 0 };
const chosen: string[] = [];
for (const fold of crossValidationFolds(conversations)) {
  const inner = READINGS.map(() => ({ right: 0, questions: 0 }));
  for (const { train: t, test } of crossValidationFolds(fold.train, 4)) {
    const classifierFor = trainer(t);
    READINGS.forEach((reading, i) => {
      const { right, questions } = score(classifierFor(reading), test, reading);
      inner[i]!.right += right;
      inner[i]!.questions += questions;
      summed[i]! += right;
    });
  }
  const best = inner.reduce((b, s, i) => (s.right > inner[b]!.right || (s.right === inner[b]!.right && s.questions < inner[b]!.questions) ? i : b), 0);
  chosen.push(`fold ${fold.fold}: ${READINGS[best]!.name} (inner ${inner.map((s) => s.right).join(', ')})`);
  const classifierFor = trainer(fold.train);
  READINGS.forEach((reading, i) => {
    const { right, questions } = score(classifierFor(reading), fold.test, reading);
    outer[i]!.right += right;
    outer[i]!.questions += questions;
    if (i === best) {
      nested.right += right;
      nested.questions += questions;
    }
  });
}
const n = conversations.length;
const line = (s: { right: number; questions: number }) => `flow ${((100 * s.right) / n).toFixed(1)}% (${s.right}/${n}), ${(s.questions / n).toFixed(2)} questions per conversation`;
console.log(`Triage's reading simulated (route at ${ROUTE}, ${MAX_QUESTIONS} questions + ${MAX_TORN} when torn), 5-fold cross-validation on ${n} conversations of ${file}:`);
for (const [i, reading] of READINGS.entries()) console.log(`  ${reading.name}: ${line(outer[i]!)}`);
console.log(`Chosen on the training folds only (inner 4-fold CV; inner right per reading, in the order above):\n  ${chosen.join('\n  ')}`);
console.log(`Summed over the folds' inner cross-validations (right, of ${4 * n}): ${READINGS.map((r, i) => `${r.name} ${summed[i]}`).join('; ')}`);
console.log(`The chosen reading per fold, on the outer test folds: ${line(nested)}`);
