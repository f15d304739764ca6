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
import { answerPaused } from './answerPaused.js';
import type { ApprovalDeskOptions } from './approvalDesk.js';

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
  try {
    const { openMs, answerMs, cpuMs, counts } = await answerPaused(store, id, options);
    return { openMs, answerMs, cpuMs, messagesRead: counts.messagesRead };
  } finally {
    await close();
  }
}

await openAndAnswer(values.warm!);
console.log(JSON.stringify(await openAndAnswer(values.id!)));
