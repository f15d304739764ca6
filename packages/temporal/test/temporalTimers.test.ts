import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '@baton/core';
import { bundleBatonWorkflows, REQUEST_EXPIRED, TemporalSessions } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { harness } from './support/deskHarness.js';
import { startTemporalServer, type TemporalServer } from './support/temporalServer.js';
import { startWorkerProcess, type WorkerProcess } from './support/workerProcess.js';

// Durable timers: each test kills its worker (SIGKILL) and restarts the Temporal server (this file's
// own, same database) while the timer runs; a new worker then sees it fire.
let h: Awaited<ReturnType<typeof harness>>;
let server: TemporalServer;
let client: Client;
let connection: Connection;
let dir: string;
let bundlePath: string;
let logFile: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  h = await harness();
  server = await startTemporalServer();
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  dir = await mkdtemp(join(tmpdir(), 'baton-temporal-timers-'));
  bundlePath = join(dir, 'workflows.js');
  logFile = join(dir, 'tools.log');
  await writeFile(logFile, '');
  await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await connection?.close();
  await server?.close();
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function worker(who: string): Promise<WorkerProcess> {
  const started = await startWorkerProcess([
    server.address,
    h.taskQueue,
    mongoTestUrl(),
    h.dbName,
    who,
    logFile,
    bundlePath,
  ]);
  workers.push(started);
  return started;
}

/** Kills the worker, restarts the server (the timer is pending in its database) and starts a new worker. */
async function crashEverything(current: WorkerProcess, next: string): Promise<WorkerProcess> {
  await current.kill();
  await server.restart();
  return worker(next);
}

async function eventually<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

it('an approval with a 2-second deadline is answered with the named expired result, across a worker kill and a server restart', async () => {
  const first = await worker('first');
  const sessions = new TemporalSessions({
    client,
    taskQueue: h.taskQueue,
    timers: { requestDeadlineMs: { tool_approval: 2_000 } },
  });
  const chat = sessions.session({ sessionId: 'deadline-1', userId: 'u-1' });
  const paused = await chat.send('Please refund order 77');
  const [request] = paused.pendingRequests;
  if (request?.type !== 'tool_approval') throw new Error(`expected an approval, got ${JSON.stringify(request)}`);
  expect(request.toolName).toBe('refund');
  await crashEverything(first, 'second');

  const messages = await eventually(async () => {
    const stored = await h.store.readMessages('deadline-1', 'main');
    return stored.some((m) => m.role === 'assistant' && m.content.startsWith('Done:')) ? stored : undefined;
  }, 'the expiry');
  const result = messages.find((m) => m.role === 'tool' && m.toolCallId === request.toolCallId);
  expect(result).toMatchObject({ isError: true });
  expect(result!.content).toContain(`${REQUEST_EXPIRED}: not answered within 2000 ms`);
  expect(messages.filter((m) => m.role === 'tool' && m.toolCallId === request.toolCallId)).toHaveLength(1);
  expect(await readFile(logFile, 'utf8')).not.toContain('refund:'); // the tool never ran
  await expect(chat.respond(request.id, { approved: true })).rejects.toThrow(NotFoundError);
  await expect(chat.respond(request.id, { approved: true })).rejects.toThrow(REQUEST_EXPIRED);
  expect((await chat.state()).pending).toEqual([]);
});

it('an idle session is closed into an episode by its timer, across a worker kill and a server restart', async () => {
  const first = await worker('third');
  const sessions = new TemporalSessions({ client, taskQueue: h.taskQueue, timers: { idleCloseMs: 3_000 } });
  const chat = sessions.session({ sessionId: 'idle-1', userId: 'u-idle' });
  await chat.send('Where is order 5?');
  await crashEverything(first, 'fourth');

  const session = await eventually(async () => {
    const stored = await h.store.getSession('idle-1');
    return stored?.status === 'closed' ? stored : undefined;
  }, 'the idle close');
  expect(session.closedReason).toBe('idle');
  const episodes = await h.store.findEpisodes({ userId: 'u-idle' });
  expect(episodes).toHaveLength(1);
  expect(episodes[0]!.transcript.map((t) => t.content)).toContain('Where is order 5?');
});
