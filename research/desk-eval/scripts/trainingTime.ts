/**
 * Prints how long the offline models (the router's classifier, the six specialists' case classifiers and the
 * hand-back's flow classifier: `createOfflineModels`) take to train on 1,000 conversations, or with `--router` the
 * router's classifier alone (`trainRouterClassifier`, as `createOfflineModels` trains it): the conversations of a file (default the demo conversations),
 * repeated with fresh ids up to 1,000, each copy's customer messages ending in a word of its own (`copy17`), so
 * that no two copies' texts are equal and the classifiers' remembered words ({@link forgetTextFeatures}) make no
 * copy free; three runs, each timed after forgetting them (as a new process starts): wall time, and the process's
 * CPU time (user + system, which a loaded machine inflates less than the wall time).
 *
 * `npx tsx --conditions=source research/desk-eval/scripts/trainingTime.ts [FILE] [--router]`
 */

import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { createOfflineModels } from '@baton/example-support-desk/desk/deskModels.js';
import {
  forgetTextFeatures,
  loadConversations,
  loadGuidelines,
  trainRouterClassifier,
} from '@baton/support-desk-models';
import { scriptArgs } from './scriptArgs.js';

const { file, flags } = scriptArgs('trainingTime.ts', 'How long the offline models take to learn a file.', {
  '--router': 'time the router only',
});
const routerOnly = flags.router;
const conversations = await loadConversations(file);
const thousand = Array.from({ length: 1000 }, (_, i) => {
  const conversation = conversations[i % conversations.length]!;
  const copy = Math.floor(i / conversations.length);
  const turns = conversation.turns.map((turn) =>
    turn.role === 'customer' && copy > 0 ? { ...turn, text: `${turn.text} copy${copy}` } : turn,
  );
  return { ...conversation, turns, id: `training-${i}` };
});
const ontology = loadOntology();
const times: Array<{ wall: number; cpu: number }> = [];
for (let run = 0; run < 3; run += 1) {
  forgetTextFeatures();
  const started = performance.now();
  const cpu = process.cpuUsage();
  if (routerOnly) {
    trainRouterClassifier(thousand, loadGuidelines(ontology));
  } else {
    createOfflineModels(thousand, ontology);
  }
  const used = process.cpuUsage(cpu);
  times.push({ wall: performance.now() - started, cpu: (used.user + used.system) / 1000 });
}
console.log(
  `${routerOnly ? "The router's classifier" : 'Offline models'} trained on 1,000 conversations (${conversations.length} of ${file}, repeated): ${times.map((t) => `${t.wall.toFixed(0)} ms (CPU ${t.cpu.toFixed(0)} ms)`).join(', ')}`,
);
