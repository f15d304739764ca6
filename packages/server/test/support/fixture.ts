import { InMemoryStore, type Store } from '@baton/core';
import { createBatonApp } from '../../src/index.js';
import { type ServedBaton, serveBaton } from '../../src/node.js';
import { TOKENS } from './httpClient.js';
import { serverDesk } from './serverDesk.js';

/** A real HTTP server on 127.0.0.1 over the test desk, with the test tenants' tokens; `await using` closes it. */
export async function startDeskServer(options: { store?: Store; gate?: () => Promise<void> } = {}) {
  const store = options.store ?? new InMemoryStore();
  const { workflow, refunds } = serverDesk(store, options.gate === undefined ? {} : { gate: options.gate });
  const app = createBatonApp({
    workflow,
    authenticate: (request) => TOKENS[request.headers.get('authorization') ?? ''],
  });
  const server: ServedBaton = await serveBaton(app);
  return {
    url: server.url,
    store,
    workflow,
    refunds,
    close: () => server.close(),
    [Symbol.asyncDispose]: () => server.close(),
  };
}
