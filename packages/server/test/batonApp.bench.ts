/**
 * What the HTTP layer adds to a turn: the same turn (triage hands off, billing asks the customer a
 * question: two instant ScriptedModel calls, ~14 events) run in-process (`await session.send`), over
 * HTTP as Server-Sent Events (`POST /sessions/:id/messages`, the stream read to its end with
 * eventsource-parser) and over HTTP as JSON (`Accept: application/json`), on a real server on
 * 127.0.0.1 and an InMemoryStore. Each iteration is a new session and its first turn.
 * Run: npx vitest bench --run --project @baton/server test/batonApp.bench.ts
 */
import { InMemoryStore } from '@baton/core';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';
import { serverDesk } from './support/serverDesk.js';

let server: Awaited<ReturnType<typeof startDeskServer>>;
let ann: ReturnType<typeof client>;
let n = 0;
const inProcess = serverDesk(new InMemoryStore()).workflow;

beforeAll(async () => {
  server = await startDeskServer();
  ann = client(server.url);
});
afterAll(async () => {
  await server.close();
});

describe('one turn with a handoff and a question', () => {
  bench('in-process: await session.send', async () => {
    const session = await inProcess.session({ id: `p-${++n}` });
    await session.send('I was charged twice');
  });
  bench('HTTP, Server-Sent Events', async () => {
    const id = `s-${++n}`;
    await ann.json('POST', '/sessions', { id });
    await ann.stream('POST', `/sessions/${id}/messages`, { text: 'I was charged twice' });
  });
  bench('HTTP, JSON', async () => {
    const id = `j-${++n}`;
    await ann.json('POST', '/sessions', { id });
    await ann.json('POST', `/sessions/${id}/messages`, { text: 'I was charged twice' });
  });
});
