import { randomUUID } from 'node:crypto';
import type { Message, Store } from '@baton/core';
import { MongoStore } from '@baton/store-mongo';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { inject } from 'vitest';
import { mongoTestUrl } from '../../../../test/support/mongoTestUrl.js';

/** The SDK's own lines (worker states, each expected activity failure) stay out of the test output; errors still show. */
export function quietTemporal(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Installed already (another test file of this worker thread).
  }
}

/** A fresh MongoStore (its own database on the run's FerretDB) and a Temporal client on the run's dev server. */
export async function harness(): Promise<{
  store: MongoStore;
  dbName: string;
  client: Client;
  address: string;
  taskQueue: string;
  close: () => Promise<void>;
}> {
  quietTemporal();
  const dbName = `temporal-${randomUUID().slice(0, 8)}`;
  const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  await store.init();
  const address = inject('temporalAddress');
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  return {
    store,
    dbName,
    client,
    address,
    taskQueue: `baton-${randomUUID().slice(0, 8)}`,
    close: async () => {
      await connection.close();
      await store.close();
    },
  };
}

/** What a user would check of a stored branch: seqs 1..n in order, each message once, every tool call answered once. */
export async function storedBranch(
  store: Store,
  sessionId: string,
  scope: { tenantId?: string } = {},
): Promise<{ messages: Message[]; dangling: string[]; answeredTwice: string[] }> {
  const messages = await store.readMessages(sessionId, 'main', scope);
  const results = new Map<string, number>();
  for (const m of messages)
    if (m.role === 'tool' && m.toolCallId !== undefined)
      results.set(m.toolCallId, (results.get(m.toolCallId) ?? 0) + 1);
  const calls = messages.flatMap((m) => m.toolCalls?.map((c) => c.id) ?? []);
  return {
    messages,
    dangling: calls.filter((id) => !results.has(id)),
    answeredTwice: [...results].filter(([, n]) => n > 1).map(([id]) => id),
  };
}
