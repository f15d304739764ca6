/**
 * Prints, for each subflow, how the specialists did on it under 5-fold cross-validation: how many
 * conversations, how many named the right case, how many ran kb.json's expected action sequence in
 * order, and for each miss the expected sequence against the actions that ran (with the case named).
 *
 * `npx tsx --conditions=source examples/support-desk/scripts/caseworkBreakdown.ts FILE [--misses]`
 */
import { loadConversations } from '../src/abcdData.js';
import { chooseDeskStore } from '../src/deskStore.js';
import { loadOntology } from '../src/ontology.js';
import { ranInOrder } from '../src/replayConversation.js';
import { runReplay } from '../src/runReplay.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: caseworkBreakdown.ts FILE [--misses]');
const showMisses = process.argv.includes('--misses');
const ontology = loadOntology();
const conversations = await loadConversations(file);
const report = await runReplay({ conversations, ontology, deskStore: chooseDeskStore({ directory: ':memory:' }) });
const bySubflow = new Map<string, typeof report.conversations>();
for (const outcome of report.conversations) bySubflow.set(outcome.subflow, [...(bySubflow.get(outcome.subflow) ?? []), outcome]);
const pct = (k: number, n: number) => `${((100 * k) / n).toFixed(0)}%`.padStart(4);
console.log(`${'subflow'.padEnd(26)} n  case  seq   expected sequence`);
for (const [subflow, outcomes] of [...bySubflow].sort((a, b) => a[0].localeCompare(b[0]))) {
  const expected = ontology.sequences[subflow] ?? [];
  const right = outcomes.filter((o) => o.predictedSubflow === subflow).length;
  const inOrder = outcomes.filter((o) => ranInOrder(expected, o.actions)).length;
  console.log(`${subflow.padEnd(26)}${String(outcomes.length).padStart(2)} ${pct(right, outcomes.length)} ${pct(inOrder, outcomes.length)}  ${expected.join(' > ')}`);
  if (!showMisses) continue;
  for (const o of outcomes.filter((x) => !ranInOrder(expected, x.actions))) {
    console.log(`    ${o.id} named ${o.predictedSubflow ?? '-'} (flow ${o.predictedFlow ?? '-'}): ${o.actions.join(' > ') || '(none)'}`);
  }
}
const right = report.conversations.filter((o) => o.predictedSubflow === o.subflow);
const rightButMissed = right.filter((o) => !ranInOrder(ontology.sequences[o.subflow] ?? [], o.actions)).length;
console.log(`\nflow ${report.routing.flow.correct}, subflow ${report.casework.subflow.correct}, sequence in order ${report.casework.sequenceInOrder.correct} of ${report.conversations.length}; case right but sequence missed: ${rightButMissed}`);
