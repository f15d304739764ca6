/**
 * Chooses what triage reads of the customer's opening by nested cross-validation of its policy: each
 * conversation's customer messages are fed, one by one, to the desk's own router (`AbcdRouterModel`, its
 * question policy and defaults: route at once from 0.8, which topic when torn, the name or account, at most two
 * questions and one more while torn below 0.5), each answering triage's question when it asked one, until it
 * hands off; its classifier is the desk's (`createRouterClassifier`, learning what the desk's router learns).
 * The candidates are readings (the router's `read` option): which of the messages heard so far triage
 * classifies, less the customer's name and ids. For each of the 5 outer folds an inner 4-fold cross-validation
 * on the outer training folds ONLY ranks the readings (flows right; ties: fewer questions); the winner is scored
 * on the outer test fold. Prints each reading's outer flow accuracy and questions per conversation, the choice
 * per fold, the inner right counts summed over the folds, and the nested figure.
 *
 * With `--clarify` the candidates are the desk's reading before this choice and `triageText`, each with the router's
 * `clarifyBelow` at 0 (never), 0.5, 0.65 and 0.8: which topic, once the customer gave their name, while below it.
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/triageReadCv.ts [FILE] [--clarify]`
 */
import type { ModelMessage } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { SPECIALISTS, specialistForFlow, TRIAGE } from '@baton/example-support-desk/desk/specialists.js';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import type { Classification, FlowClassifier, SlotValues } from '@baton/support-desk-models';
import {
  type AbcdConversation,
  AbcdRouterModel,
  createRouterClassifier,
  customerMessages,
  flowInReason,
  GUIDELINE_COPIES,
  guidelineTrainingTexts,
  hasContent,
  loadConversations,
  loadGuidelines,
  routerTrainingTexts,
  triageText,
  withoutIdentity,
} from '@baton/support-desk-models';
import { nestedTriageChoice } from './nestedTriageChoice.js';
import { scriptArgs } from './scriptArgs.js';

interface Reading {
  name: string;
  read: (messages: readonly string[], slots: SlotValues) => string;
  /** The router's `clarifyBelow` (default 0). */
  clarifyBelow?: number;
}
/** The messages that say anything (a content word) once the customer's name and ids are left out; all when none does. */
const saying = (messages: readonly string[], slots: SlotValues) => {
  const words = messages.map((m) => withoutIdentity(m, slots));
  const kept = words.filter(hasContent);
  return kept.length > 0 ? kept : words;
};
const READINGS: Reading[] = [
  { name: 'everything so far (the desk before)', read: (m, slots) => withoutIdentity(m.join('\n'), slots) },
  { name: 'the messages that say anything', read: (m, slots) => saying(m, slots).join('\n') },
  ...[2, 3].map((k) => ({
    name: `the first ${k} messages that say anything`,
    read: (m: readonly string[], slots: SlotValues) => saying(m, slots).slice(0, k).join('\n'),
  })),
  { name: 'the messages that say anything besides who the customer is (triageText)', read: triageText },
];
const { file, flags } = scriptArgs('triageReadCv.ts', 'Nested cross-validation of what triage reads.', {
  '--clarify': 'candidates: the which-topic question after the name, by confidence',
});
if (flags.clarify) {
  const before = READINGS[0]!;
  const desk = READINGS.at(-1)!;
  READINGS.splice(
    0,
    READINGS.length,
    ...[before, desk].flatMap((r) =>
      [0, 0.5, 0.65, 0.8].map((clarifyBelow) => ({
        ...r,
        name: `${r.name}, which topic after the name below ${clarifyBelow}`,
        clarifyBelow,
      })),
    ),
  );
}

const ontology = loadOntology();
const tools = [...SPECIALISTS.map((s) => `handoff_to_${s.name}`), REQUEST_USER_INPUT].map((name) => ({
  name,
  description: name,
  parameters: {},
}));

/** Triage's decision on one conversation, the customer's recorded messages answering its questions: the flow it handed off with and the questions it asked. */
function simulate(
  classifier: FlowClassifier,
  conversation: AbcdConversation,
  reading: Reading,
): { flow: string | undefined; questions: number } {
  const router = new AbcdRouterModel({
    classifier,
    specialistFor: specialistForFlow,
    flows: ontology.flows,
    read: reading.read,
    clarifyBelow: reading.clarifyBelow ?? 0,
  });
  const messages: ModelMessage[] = [{ role: 'system', content: 'Route.' }];
  let pending: string | undefined;
  let questions = 0;
  for (const text of customerMessages(conversation)) {
    messages.push(
      pending === undefined
        ? { role: 'user', content: text }
        : { role: 'tool', toolCallId: pending, toolName: REQUEST_USER_INPUT, content: text },
    );
    const decision = router.decide({ messages, tools, agent: TRIAGE });
    if (decision.type === 'text') {
      messages.push({ role: 'assistant', agent: TRIAGE, content: decision.text });
      pending = undefined;
    } else if (decision.name === REQUEST_USER_INPUT) {
      messages.push({
        role: 'assistant',
        agent: TRIAGE,
        content: '',
        toolCalls: [{ id: decision.id, name: decision.name, arguments: JSON.stringify(decision.args) }],
      });
      pending = decision.id;
      questions += 1;
    } else {
      return { flow: flowInReason(String(decision.args.reason ?? ''), ontology.flows), questions };
    }
  }
  return { flow: undefined, questions };
}

const conversations = await loadConversations(file);
const guidelines = guidelineTrainingTexts(loadGuidelines(ontology), 'flow', GUIDELINE_COPIES.router);
/** The desk's router classifier, each text classified once (every reading reads many of the same texts). */
function train(items: readonly AbcdConversation[]): FlowClassifier {
  const classifier = createRouterClassifier([...items.flatMap(routerTrainingTexts), ...guidelines]);
  const known = new Map<string, Classification | undefined>();
  return {
    classify: (text) => {
      if (!known.has(text)) known.set(text, classifier.classify(text));
      return known.get(text);
    },
  };
}

const { outer, innerRightSummed, folds, nested } = nestedTriageChoice(conversations, READINGS, train, simulate);
const chosen = folds.map(
  (f) => `fold ${f.fold}: ${READINGS[f.chosen]!.name} (inner ${f.inner.map((s) => s.right).join(', ')})`,
);
const n = conversations.length;
const line = (s: { right: number; questions: number }) =>
  `flow ${((100 * s.right) / n).toFixed(1)}% (${s.right}/${n}), ${(s.questions / n).toFixed(2)} questions per conversation`;
console.log(
  `Triage's reading, the desk's router on the recorded messages, 5-fold cross-validation on ${n} conversations of ${file}:`,
);
for (const [i, reading] of READINGS.entries()) console.log(`  ${reading.name}: ${line(outer[i]!)}`);
console.log(
  `Chosen on the training folds only (inner 4-fold CV; inner right per reading, in the order above):\n  ${chosen.join('\n  ')}`,
);
console.log(
  `Summed over the folds' inner cross-validations (right, of ${4 * n}): ${READINGS.map((r, i) => `${r.name} ${innerRightSummed[i]}`).join('; ')}`,
);
console.log(`The chosen reading per fold, on the outer test folds: ${line(nested)}`);
