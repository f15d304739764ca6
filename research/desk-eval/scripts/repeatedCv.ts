/**
 * Repeated cross-validation (as scikit-learn's `RepeatedKFold`): replays FILE once per seed `1`…`R`, each a
 * different random partition into K folds (`foldOf(id, K, seed)`), and prints per repeat the conversations
 * right for the flow, the specialist, the case (subflow) and the expected action sequence in order; then the
 * mean, standard deviation, min and max of each over the repeats, and the default partition (K folds, no seed:
 * the one `start` reports) beside them. The spread shows how much a figure on a small file owes to the one
 * partition it was measured on. Offline models, in-memory store, in this thread (one replay after another).
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/repeatedCv.ts FILE [--repeats R (default 5)] [--folds K (default 5)]`
 */
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { loadConversations } from '@baton/support-desk-models';
import { Command, InvalidArgumentError } from 'commander';
import { checkCrossValidation, FOLDS } from '../src/folds.js';
import type { ReplayReport } from '../src/replayReport.js';
import type { Accuracy } from '../src/routingReport.js';
import { runReplay } from '../src/runReplay.js';

/** `--repeats`/`--folds`: a whole number ≥ `least`. */
const whole = (name: string, least: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < least)
    throw new InvalidArgumentError(`${name} must be a whole number ≥ ${least}, not ${JSON.stringify(value)}.`);
  return n;
};
const program = new Command()
  .name('repeatedCv.ts')
  .description(
    'Replays a file once per cross-validation seed 1…R and prints each repeat, their mean, spread and the default partition.',
  )
  .argument('<file>', 'conversations, JSON Lines')
  .option('--repeats <r>', 'how many seeds', whole('--repeats', 1), 5)
  .option('--folds <k>', 'folds per partition', whole('--folds', 2), FOLDS)
  .parse(process.argv);
const file = program.args[0]!;
const { repeats, folds } = program.opts<{ repeats: number; folds: number }>();

const conversations = await loadConversations(file);
checkCrossValidation(folds, undefined, conversations.length);
const ontology = loadOntology();

/** The four figures of a replay, in the order they are printed. */
const MEASURES: Array<[string, (report: ReplayReport) => Accuracy]> = [
  ['flow', (r) => r.routing.flow],
  ['specialist', (r) => r.routing.specialist],
  ['case', (r) => r.casework.subflow],
  ['sequence', (r) => r.casework.sequenceInOrder],
];
const n = conversations.length;
/** A count of conversations that may have a fraction (a mean), as wide as `cell`'s `right/n`. */
const count = (value: number) => value.toFixed(1).padStart(5 + String(n).length);
const pct = (right: number) => `${((100 * right) / n).toFixed(1)}%`;
const cell = (right: number) => `${String(right).padStart(4)}/${n} ${pct(right).padStart(6)}`;
const width = 18;
const line = (label: string, cells: string[]) => `${label.padEnd(19)}${cells.map((c) => c.padEnd(width)).join('')}`;

const replay = (seed: string | undefined) =>
  runReplay({
    conversations,
    ontology,
    deskStore: chooseDeskStore({ directory: ':memory:' }),
    crossValidation: seed === undefined ? { folds } : { folds, seed },
  });

console.log(`${file}: ${n} conversations, ${folds}-fold cross-validation repeated with seeds 1-${repeats}`);
console.log(
  line(
    '',
    MEASURES.map(([name]) => name),
  ),
);
const rights: number[][] = MEASURES.map(() => []);
for (let seed = 1; seed <= repeats; seed += 1) {
  const report = await replay(String(seed));
  if (report.counts.failed > 0) throw new Error(`seed ${seed}: ${report.counts.failed} conversations failed`);
  for (const [i, [, pick]] of MEASURES.entries()) rights[i]!.push(pick(report).correct);
  console.log(
    line(
      `seed ${seed}`,
      MEASURES.map(([, pick]) => cell(pick(report).correct)),
    ),
  );
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
// Sample standard deviation (n - 1), in conversations; 0 for a single repeat.
const sd = (xs: number[]) =>
  xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
console.log(
  line(
    'mean',
    rights.map((xs) => `${count(mean(xs))} ${pct(mean(xs)).padStart(6)}`),
  ),
);
console.log(
  line(
    'sd',
    rights.map((xs) => `${count(sd(xs))} ${pct(sd(xs)).padStart(6)}`),
  ),
);
console.log(
  line(
    'min',
    rights.map((xs) => cell(Math.min(...xs))),
  ),
);
console.log(
  line(
    'max',
    rights.map((xs) => cell(Math.max(...xs))),
  ),
);
const fixed = await replay(undefined);
console.log(
  line(
    'default (no seed)',
    MEASURES.map(([, pick]) => cell(pick(fixed).correct)),
  ),
);
console.log(
  `default partition against the repeats: ${MEASURES.map(([name, pick], i) => {
    const right = pick(fixed).correct;
    const above = right - mean(rights[i]!);
    const place =
      right > Math.max(...rights[i]!)
        ? 'above every repeat'
        : right < Math.min(...rights[i]!)
          ? 'below every repeat'
          : 'within their range';
    return `${name} ${above >= 0 ? '+' : ''}${above.toFixed(1)} on the mean (${place})`;
  }).join(', ')}`,
);
