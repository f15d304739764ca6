/**
 * Prints how long the offline models (the router's and the six specialists' classifiers) take to
 * train on 1,000 conversations: the conversations of a file (default the demo conversations),
 * repeated with fresh ids up to 1,000; three runs, each timed.
 *
 * `npx tsx --conditions=source examples/support-desk/scripts/trainingTime.ts [FILE]`
 */
import { loadConversations } from '../src/data/abcdData.js';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';
import { loadOntology } from '../src/data/ontology.js';
import { createOfflineModels } from '../src/desk/deskModels.js';

const file = process.argv[2] ?? DEMO_DATA_FILE;
const conversations = await loadConversations(file);
const thousand = Array.from({ length: 1000 }, (_, i) => ({ ...conversations[i % conversations.length]!, id: `training-${i}` }));
const ontology = loadOntology();
const times: number[] = [];
for (let run = 0; run < 3; run += 1) {
  const started = performance.now();
  createOfflineModels(thousand, ontology);
  times.push(performance.now() - started);
}
console.log(`Offline models trained on 1,000 conversations (${conversations.length} of ${file}, repeated): ${times.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
