/**
 * A replay worker thread's entry (`replayWorker.mjs` imports it once tsx is registered; `replayInWorkers` starts the thread): replays its share of the conversations
 * into the store named by `workerData.store`, posting each outcome (and, when asked, each event) as it
 * goes, then its part of the report. It stops taking conversations when the parent posts `{ type: 'stop' }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import type { ReplayWorkerData, ReplayWorkerMessage } from './replayWorkers.js';
import { replayPart } from './runReplay.js';

const port = parentPort;
if (port === null) throw new Error('replayWorkerMain.ts runs as a worker thread (see replayInWorkers).');
const data = workerData as ReplayWorkerData;
const post = (message: ReplayWorkerMessage) => port.postMessage(message);
let stop = false;
port.on('message', (message: { type: string }) => {
  if (message.type === 'stop') stop = true;
});

try {
  const part = await replayPart(
    {
      conversations: data.conversations,
      training: data.training,
      scheme: data.scheme,
      ontology: loadOntology(),
      deskStore: chooseDeskStore(data.store),
      restartEvery: data.restartEvery,
      rejectRefunds: data.rejectRefunds,
      concurrency: data.concurrency,
      stopRequested: () => stop,
      ...(data.events ? { onEvent: (event) => post({ type: 'event', event }) } : {}),
      onOutcome: (outcome, index) => post({ type: 'outcome', index, outcome }),
    },
    data.conversations.length,
  );
  post({ type: 'done', part });
} catch (error) {
  const { name, message, stack } = error instanceof Error ? error : new Error(String(error));
  post({ type: 'failed', error: { name, message, ...(stack === undefined ? {} : { stack }) } });
}
// The parent's messages keep the port open: close it so the thread exits.
port.close();
