/**
 * The child process of the resume bench's long-vs-short table: a new process opens a paused session
 * and answers its approval, as a restarted server would. It first opens and answers another paused
 * session of the same store unmeasured (`--warm`: module loading, JIT, the store's folders or
 * connection), then the measured one (`--id`), and prints one JSON line: `{ openMs, answerMs, cpuMs,
 * messagesRead }`.
 *
 * Run by `compareBench.ts`: tsx openInChild.ts --store file|mongo --at DIR|URL [--db NAME] --warm ID --id ID
 *   [--window N | --budget TOKENS]
 */
import { parseArgs } from 'node:util';
import { FileStore, type Store } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { type ApprovalDeskOptions, approvalDesk } from './approvalDesk.js';
import { countingStore } from './countingStore.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    at: { type: 'string' },
    db: { type: 'string' },
    warm: { type: 'string' },
    id: { type: 'string' },
    window: { type: 'string' },
    budget: { type: 'string' },
  },
});

async function openStore(): Promise<{ store: Store; close(): Promise<void> }> {
  if (values.store === 'file') {
    const store = new FileStore({ directory: values.at! });
    return { store, close: () => store.close() };
  }
  const store = new MongoStore({ url: values.at! }, { dbName: values.db! });
  await store.init();
  return { store, close: () => store.close() };
}

const options: ApprovalDeskOptions = {};
if (values.window !== undefined) options.historyWindow = Number(values.window);
if (values.budget !== undefined) options.workingMemoryTokens = Number(values.budget);

/** Opens session `id` through a new store object and answers its approval. */
async function openAndAnswer(id: string) {
  const { store, close } = await openStore();
  const counting = countingStore(store);
  try {
    const desk = approvalDesk(counting.store, options);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const session = await desk.session({ id, branch: 'main' });
    const opened = performance.now();
    const request = session.pendingRequests[0];
    if (request === undefined) throw new Error(`session ${id} has no pending approval after opening`);
    let completed = false;
    for await (const event of session.respond(request.id, { approved: true }))
      if (event.type === 'turn.completed') completed = true;
    const answered = performance.now();
    const used = process.cpuUsage(cpu);
    if (!completed) throw new Error(`answering session ${id} did not complete its turn`);
    return {
      openMs: opened - started,
      answerMs: answered - opened,
      cpuMs: (used.user + used.system) / 1000,
      messagesRead: counting.counts.messagesRead,
    };
  } finally {
    await close();
  }
}

await openAndAnswer(values.warm!);
console.log(JSON.stringify(await openAndAnswer(values.id!)));
