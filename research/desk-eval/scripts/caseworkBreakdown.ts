/**
 * Prints, for each subflow, how the specialists did on it under 5-fold cross-validation: how many
 * conversations, how many named the right case, how many ran kb.json's expected action sequence in
 * order, and for each miss the expected sequence against the actions that ran (with the case named).
 * The column `agents` is the same measure on what ABCD's own agents did (their console log, read back
 * into actions; the troubleshooting actions all log "Agent is looking for solutions", so that line
 * stands for any of them): how far the human agents themselves followed kb.json. Last, the steps run
 * again, the console actions called with no arguments at all, and where the wrong cases come from (the
 * flow wrong at the end, a case of another flow, or another case of the right flow: the pairs confused).
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/caseworkBreakdown.ts FILE [--misses]`
 */

import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { loadConversations } from '@baton/support-desk-models';
import { ranInOrder } from '../src/replayConversation.js';
import { runReplay } from '../src/runReplay.js';
import { scriptArgs } from './scriptArgs.js';

/** Console log lines (ABCD's `action` turns) back to the actions that wrote them (see actionHandlers.ts). */
const LOG_ACTIONS: Array<[RegExp, readonly string[]]> = [
  [/^Account has been pulled up/, ['pull-up-account']],
  [/^Identity verification in progr?ess/, ['verify-identity']],
  [/^Purchase validation/, ['validate-purchase']],
  [/^A refund has been made/, ['offer-refund']],
  [/^A reason of/, ['record-reason']],
  [/^Details of/, ['enter-details']],
  [/^Order has been updated/, ['update-order']],
  [/^Account has been updated/, ['update-account']],
  [/^Shipping status of/, ['shipping-status']],
  [/^Membership level of/, ['membership']],
  [/^A purchase of/, ['make-purchase']],
  [/has been notified/, ['notify-team']],
  [/^Querying the system for subscription/, ['subscription-status']],
  [/^Querying the system for an answer/, ['ask-the-oracle']],
  [/^A password has been generated/, ['make-password']],
  [/^A promo code has been created/, ['promo-code']],
  [/^A link will be sent/, ['send-link']],
  [/^FAQ answer related to/, ['select-faq']],
  [/^Searching the FAQ pages/, ['search-faq']],
  [/^Agent is looking for solutions/, ['try-again', 'log-out-in', 'instructions']],
];

/** Whether `expected` appears in order in a console log whose lines may each stand for several actions. */
function loggedInOrder(expected: readonly string[], log: ReadonlyArray<readonly string[]>): boolean {
  let next = 0;
  for (const actions of log) if (next < expected.length && actions.includes(expected[next]!)) next += 1;
  return expected.length > 0 && next === expected.length;
}

function consoleLog(turns: ReadonlyArray<{ role: string; text: string }>): string[][] {
  return turns
    .filter((turn) => turn.role === 'action')
    .map((turn) => {
      const search = /^System Action: search (\w+)/.exec(turn.text);
      if (search) return [`search-${search[1]!.toLowerCase()}`];
      return [...(LOG_ACTIONS.find(([pattern]) => pattern.test(turn.text))?.[1] ?? [])];
    });
}

const { file, flags } = scriptArgs(
  'caseworkBreakdown.ts',
  "Where the specialists' casework goes wrong: actions called without their slots, and more.",
  { '--misses': 'list the conversations whose sequence did not run' },
  true,
);
const showMisses = flags.misses;
const ontology = loadOntology();
const conversations = await loadConversations(file);
// Console actions that take slots, called with none (the desk requires only some actions' slots).
const bare = new Map<string, { calls: number; bare: number }>();
const report = await runReplay({
  conversations,
  ontology,
  deskStore: chooseDeskStore({ directory: ':memory:' }),
  onEvent: (event) => {
    if (event.type !== 'message' || event.message.role !== 'assistant') return;
    for (const call of event.message.toolCalls ?? []) {
      if ((ontology.actions.get(call.name)?.slots.length ?? 0) === 0) continue;
      const counts = bare.get(call.name) ?? { calls: 0, bare: 0 };
      counts.calls += 1;
      if (call.arguments === '{}') counts.bare += 1;
      bare.set(call.name, counts);
    }
  },
});
const bySubflow = new Map<string, typeof report.conversations>();
for (const outcome of report.conversations)
  bySubflow.set(outcome.subflow, [...(bySubflow.get(outcome.subflow) ?? []), outcome]);
const pct = (k: number, n: number) => `${((100 * k) / n).toFixed(0)}%`.padStart(4);
const logs = new Map(conversations.map((c) => [c.id, consoleLog(c.turns)]));
console.log(`${'subflow'.padEnd(26)} n  case  seq agents  expected sequence`);
for (const [subflow, outcomes] of [...bySubflow].sort((a, b) => a[0].localeCompare(b[0]))) {
  const expected = ontology.sequences[subflow] ?? [];
  const right = outcomes.filter((o) => o.predictedSubflow === subflow).length;
  const inOrder = outcomes.filter((o) => ranInOrder(expected, o.actions)).length;
  const byAgents = outcomes.filter((o) => loggedInOrder(expected, logs.get(o.id) ?? [])).length;
  console.log(
    `${subflow.padEnd(26)}${String(outcomes.length).padStart(2)} ${pct(right, outcomes.length)} ${pct(inOrder, outcomes.length)}   ${pct(byAgents, outcomes.length)}  ${expected.join(' > ')}`,
  );
  if (!showMisses) continue;
  for (const o of outcomes.filter((x) => !ranInOrder(expected, x.actions))) {
    const agents = loggedInOrder(expected, logs.get(o.id) ?? []) ? 'in order' : 'not in order either';
    console.log(
      `    ${o.id} named ${o.predictedSubflow ?? '-'} (flow ${o.predictedFlow ?? '-'}; ABCD's agent: ${agents}): ${o.actions.join(' > ') || '(none)'}`,
    );
  }
}
const right = report.conversations.filter((o) => o.predictedSubflow === o.subflow);
const rightButMissed = right.filter((o) => !ranInOrder(ontology.sequences[o.subflow] ?? [], o.actions)).length;
// Steps run again (the policy re-runs a step that ran before an earlier step of the case) and conversations with any.
const reruns = report.conversations.map((o) => o.actions.length - new Set(o.actions).size);
console.log(
  `steps run a second time or more: ${reruns.reduce((a, b) => a + b, 0)}, in ${reruns.filter((n) => n > 0).length} conversations`,
);
const withNone = [...bare].filter(([, c]) => c.bare > 0).sort((a, b) => b[1].bare - a[1].bare);
console.log(
  `actions called with no arguments: ${withNone.map(([name, c]) => `${name} ${c.bare} of ${c.calls}`).join(', ')}`,
);
// Where the wrong cases come from: the flow wrong at the end (routing and the hand-back), a case of another flow than
// the right one the conversation ended with, or another case of the right flow (the pairs confused, most first).
const wrongCase = report.conversations.filter((o) => o.predictedSubflow !== o.subflow);
const wrongFlow = wrongCase.filter((o) => o.finalFlow !== o.flow).length;
const otherFlow = wrongCase.filter(
  (o) => o.finalFlow === o.flow && ontology.flowOf(o.predictedSubflow ?? '') !== o.flow,
).length;
const pairs = new Map<string, number>();
for (const o of wrongCase.filter((x) => x.finalFlow === x.flow && ontology.flowOf(x.predictedSubflow ?? '') === x.flow))
  pairs.set(`${o.subflow} as ${o.predictedSubflow}`, (pairs.get(`${o.subflow} as ${o.predictedSubflow}`) ?? 0) + 1);
const withinFlow = [...pairs.values()].reduce((a, b) => a + b, 0);
console.log(
  `wrong case: ${wrongCase.length}; the flow wrong at the end ${wrongFlow}, the flow right at the end but a case of another flow ${otherFlow}, another case of the right flow ${withinFlow}: ` +
    [...pairs]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([pair, n]) => `${pair} ${n}`)
      .join(', '),
);
const agentsInOrder = report.conversations.filter((o) =>
  loggedInOrder(ontology.sequences[o.subflow] ?? [], logs.get(o.id) ?? []),
).length;
console.log(
  `\nflow ${report.routing.flow.correct}, subflow ${report.casework.subflow.correct}, sequence in order ${report.casework.sequenceInOrder.correct} of ${report.conversations.length}; ` +
    `case right but sequence missed: ${rightButMissed}; ABCD's agents ran the sequence in order in ${agentsInOrder}`,
);
