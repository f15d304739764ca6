import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@baton/core';
import { type Authenticate, createBatonApp } from '@baton/server';
import { type ServedBaton, serveBaton } from '@baton/server/node';
import { bundleBatonWorkflows, TemporalSessions, temporalRunner } from '@baton/temporal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { client, readEvents } from '../../server/test/support/httpClient.js';
import { harness, storedBranch } from './support/deskHarness.js';
import { temporalDesk } from './support/temporalDesk.js';
import { startWorkerProcess, type WorkerProcess } from './support/workerProcess.js';

// createBatonApp with the Temporal runner: a real dev server, MongoStore on FerretDB, workers in their own processes.
let h: Awaited<ReturnType<typeof harness>>;
let dir: string;
let bundlePath: string;
let logFile: string;
const workers: WorkerProcess[] = [];
const servers: ServedBaton[] = [];

const authenticate: Authenticate = (request) => {
  const match = /^Bearer (\w+)-(\w+)$/.exec(request.headers.get('authorization') ?? '');
  return match === null ? undefined : { tenantId: match[1]!, userId: match[2]! };
};

beforeAll(async () => {
  h = await harness();
  dir = await mkdtemp(join(tmpdir(), 'baton-temporal-http-'));
  bundlePath = join(dir, 'workflows.js');
  logFile = join(dir, 'tools.log');
  await writeFile(logFile, '');
  await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
});

afterAll(async () => {
  for (const server of servers) await server.close();
  for (const worker of workers) await worker.kill();
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A worker process polling `taskQueue` (`hang`: its look_up_order never finishes). */
async function worker(taskQueue: string, who: string, hang = false): Promise<WorkerProcess> {
  const args = [h.address, taskQueue, mongoTestUrl(), h.dbName, who, logFile, bundlePath, ...(hang ? ['hang'] : [])];
  const started = await startWorkerProcess(args, 240_000); // a loaded machine starts tsx and the native bridge slowly
  workers.push(started);
  return started;
}

/** The HTTP API whose turns run on the workers of `taskQueue` (its own desk object only opens sessions). */
async function serve(taskQueue: string): Promise<string> {
  const sessions = new TemporalSessions({
    client: h.client,
    taskQueue,
    store: h.store,
    turn: { heartbeatTimeoutMs: 2_000 },
  });
  const workflow = temporalDesk(h.store, { who: 'server', logFile });
  const server = await serveBaton(createBatonApp({ workflow, authenticate, runner: temporalRunner(sessions) }));
  servers.push(server);
  return server.url;
}

async function toolLog(): Promise<string[]> {
  return (await readFile(logFile, 'utf8')).trim().split('\n').filter(Boolean);
}

describe('the REST API over sessions run on Temporal workers', () => {
  let url: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    const queue = `${h.taskQueue}-rest`;
    await worker(queue, 'rest');
    url = await serve(queue);
    api = client(url, 'Bearer acme-ann');
  }, 300_000);

  it('sends a message (JSON and SSE), and /events replays the committed turn', async () => {
    expect((await api.json('POST', '/sessions', { id: 'web-1' })).status).toBe(201);
    const first = await api.json('POST', '/sessions/web-1/messages', { text: 'Where is order 1234?' });
    expect(first.status).toBe(200);
    expect(first.body.message.content).toBe('Done: order 1234 ships tomorrow');
    expect(first.body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(first.body).toMatchObject({ completed: true, closed: false, nextAgent: 'triage', pendingRequests: [] });

    const streamed = await api.stream('POST', '/sessions/web-1/messages', { text: 'And order 99?' });
    expect(streamed.status).toBe(200);
    expect(streamed.contentType).toContain('text/event-stream');
    const messages = streamed.events.filter((e) => e.event === 'message').map((e) => e.data.message);
    expect(messages.map((m) => m.seq)).toEqual([7, 8, 9, 10, 11, 12]);
    expect(messages.at(-1).content).toBe('Done: order 99 ships tomorrow');
    expect(streamed.events.at(-1)).toMatchObject({ event: 'turn.completed', data: { nextAgent: 'triage' } });

    expect(streamed.events[0]).toMatchObject({ event: 'turn.started' });
    // A client cut off after seq 9 reconnects with the last id it saw: the rest of the turn, each message once.
    const seen = streamed.events.find((e) => e.event === 'message' && e.data.message.seq === 9)!;
    const missed = await readEvents(
      await api.call('GET', '/sessions/web-1/events', undefined, {
        accept: 'text/event-stream',
        'last-event-id': seen.id,
      }),
    );
    const replayed = missed.filter((e) => e.event === 'message').map((e) => e.data.message.seq);
    expect(replayed).toEqual([10, 11, 12]);
    expect(missed.at(-1)?.event).toBe('turn.completed');
    const view = await api.json('GET', '/sessions/web-1');
    expect(view.body).toMatchObject({ headSeq: 12, running: false, routingState: 'idle' });
    expect(await toolLog()).not.toContain('look_up_order:server');
  });

  it('pauses on an approval, refuses mistakes with the in-process statuses, takes the answer, and closes', async () => {
    await api.json('POST', '/sessions', { id: 'web-2' });
    const paused = await api.json('POST', '/sessions/web-2/messages', { text: 'Please refund order 77' });
    expect(paused.status).toBe(200);
    const [request] = paused.body.pendingRequests;
    expect(request).toMatchObject({ type: 'tool_approval', toolName: 'refund' });

    const blocked = await api.json('POST', '/sessions/web-2/messages', { text: 'hello?' });
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.message).toContain(`POST /sessions/web-2/requests/${request.id}`);
    const unknown = await api.json('POST', '/sessions/web-2/requests/no-such-request', { approved: true });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await api.json('POST', '/sessions/nobody/messages', { text: 'hi' })).status).toBe(404);
    const otherTenant = await client(url, 'Bearer globex-gil').json('POST', '/sessions/web-2/messages', { text: 'hi' });
    expect(otherTenant.status).toBe(404);

    const done = await api.json('POST', `/sessions/web-2/requests/${request.id}`, { approved: true });
    expect(done.status).toBe(200);
    expect(done.body.message.content).toBe('Done: refunded order 77');
    expect(done.body.pendingRequests).toEqual([]);
    expect(await toolLog()).toContain('refund:rest');

    const closed = await api.json('POST', '/sessions/web-2/close', { reason: 'resolved' });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ status: 'closed', closedReason: 'resolved' });
    expect(await h.store.getSession('web-2', { tenantId: 'acme' })).toMatchObject({ status: 'closed' });
    const late = await api.json('POST', '/sessions/web-2/messages', { text: 'one more thing' });
    expect(late.status).toBe(410);
    expect(late.body.error.code).toBe('SESSION_CLOSED');
  });

  it('refuses a runner whose sessions cannot read the store, by name', () => {
    expect(() => temporalRunner(new TemporalSessions({ client: h.client, taskQueue: 'x' }))).toThrow(
      ConfigurationError,
    );
  });
});

it('a worker SIGKILLed mid-turn: the HTTP client awaiting the turn still gets its result; a second send meanwhile is 409', async () => {
  const queue = `${h.taskQueue}-crash`;
  const first = await worker(queue, 'first', true);
  const api = client(await serve(queue), 'Bearer acme-bob');
  await api.json('POST', '/sessions', { id: 'crash-1' });

  const turn = api.json('POST', '/sessions/crash-1/messages', { text: 'Where is order 1234?' });
  await first.printed('look_up_order started');
  const meanwhile = await api.json('POST', '/sessions/crash-1/messages', { text: 'hello?' });
  expect(meanwhile.status).toBe(409);
  expect((await api.json('GET', '/sessions/crash-1')).body).toMatchObject({ running: true, routingState: 'running' });
  // The replacement polls the same queue first (the hanging worker holds the turn), then the crash.
  await worker(queue, 'second');
  await first.kill(); // mid-tool: the user message, the handoff and the tool call are stored, the result is not
  const result = await turn; // the same HTTP request, answered with no new client request
  expect(result.status).toBe(200);
  expect(result.body.message.content).toBe('Done: order 1234 ships tomorrow');
  expect(result.body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(await toolLog()).toContain('look_up_order:second');
  expect(await toolLog()).not.toContain('look_up_order:first');

  const stored = await storedBranch(h.store, 'crash-1', { tenantId: 'acme' });
  expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(stored.dangling).toEqual([]);
  expect(stored.answeredTwice).toEqual([]);
  const events = await readEvents(
    await api.call('GET', '/sessions/crash-1/events?lastEventId=crash-1/main/0.0', undefined, {
      accept: 'text/event-stream',
    }),
  );
  expect(events.filter((e) => e.event === 'message').map((e) => e.data.message.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect((await api.json('POST', '/sessions/crash-1/messages', { text: 'And order 8?' })).status).toBe(200);
}, 600_000);
