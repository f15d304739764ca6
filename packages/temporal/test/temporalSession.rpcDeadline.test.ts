import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Authenticate, createBatonApp } from '@baton/server';
import { serveBaton } from '@baton/server/node';
import {
  bundleBatonWorkflows,
  createBatonWorker,
  TemporalSessions,
  temporalRunner,
  UpdateWaitEndedError,
} from '@baton/temporal';
import {
  Client,
  Connection,
  type ConnectionOptions,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
} from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client as httpClient } from '../../server/test/support/httpClient.js';
import { harness, storedBranch } from './support/deskHarness.js';
import { temporalDesk } from './support/temporalDesk.js';

// Each turn activity waits HOLD_MS before it runs (a turn queued or retried on another worker) and
// every Update RPC of the client (send or poll) has a RPC_DEADLINE_MS deadline (the server's long-poll deadline,
// shortened): the turn outlasts the RPC that asked for it.
const HOLD_MS = 3_500;
const RPC_DEADLINE_MS = 1_000;
type UpdateInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

let h: Awaited<ReturnType<typeof harness>>;
let dir: string;
let logFile: string;
let worker: Worker;
let running: Promise<void>;
let connection: Connection;
let sessions: TemporalSessions;
let updateRpcs = 0;

beforeAll(async () => {
  h = await harness();
  dir = await mkdtemp(join(tmpdir(), 'baton-temporal-rpc-deadline-'));
  logFile = join(dir, 'tools.log');
  await writeFile(logFile, '');
  worker = await createBatonWorker({
    connection: await NativeConnection.connect({ address: h.address }),
    taskQueue: h.taskQueue,
    workflow: temporalDesk(h.store, { who: 'w1', logFile }),
    workflowBundle: await bundleBatonWorkflows(),
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: {
            execute: async (input, next) => {
              if (ctx.info.activityType === 'batonTurn') await sleep(HOLD_MS);
              return next(input);
            },
          },
        }),
      ],
    },
  });
  running = worker.run();
  // A real gRPC deadline on each Update RPC (send or poll), as the server's long-poll deadline ends them.
  // (grpc-js runs what nextCall returns; its type names the class, which this package does not import)
  const updateDeadline = ((options, nextCall) => {
    if (!/\/(UpdateWorkflowExecution|PollWorkflowExecutionUpdate)$/.test(options.method_definition.path)) {
      return nextCall(options);
    }
    updateRpcs++;
    return nextCall({ ...options, deadline: Date.now() + RPC_DEADLINE_MS });
  }) as UpdateInterceptor;
  connection = await Connection.connect({
    address: h.address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), updateDeadline],
  });
  const client = new Client({ connection });
  sessions = new TemporalSessions({ client, taskQueue: h.taskQueue, store: h.store });
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const toolRuns = async () => (await readFile(logFile, 'utf8')).split('\n').filter((line) => line !== '');

it('a turn that outlasts the Update RPC deadline: the client asks again for the same Update and gets the turn once', async () => {
  const chat = sessions.session({ sessionId: 'slow-1', userId: 'u-1' });
  const rpcsBefore = updateRpcs;

  const turn = await chat.send('Where is order 1234?');

  expect(updateRpcs - rpcsBefore).toBeGreaterThan(1); // the first RPC's deadline passed mid-turn
  expect(turn.message?.content).toBe('Done: order 1234 ships tomorrow');
  expect(turn.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(await toolRuns()).toEqual(['look_up_order:w1']);
  const stored = await storedBranch(h.store, 'slow-1');
  expect(stored.messages.map((m) => m.id)).toEqual(turn.messages.map((m) => m.id));
  expect(stored.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Where is order 1234?']);
  expect(stored.dangling).toEqual([]);
  expect(stored.answeredTwice).toEqual([]);
  expect((await chat.state()).headSeq).toBe(6);
});

it('timeoutMs ends the wait with UpdateWaitEndedError, not the turn: the same updateId then gets its one result', async () => {
  const chat = sessions.session({ sessionId: 'slow-2', userId: 'u-2' });
  const runsBefore = (await toolRuns()).length;

  const ended = await chat.send('Where is order 55?', { updateId: 'ask-55', timeoutMs: 1_500 }).catch((e) => e);
  expect(ended).toBeInstanceOf(UpdateWaitEndedError);
  expect(ended).toMatchObject({ code: 'ABORTED', updateId: 'ask-55', workflowId: chat.workflowId });
  expect(ended.message).toContain('call again with updateId "ask-55"');

  const turn = await chat.send('Where is order 55?', { updateId: 'ask-55' });
  expect(turn.message?.content).toBe('Done: order 55 ships tomorrow');
  expect(turn.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect((await toolRuns()).length).toBe(runsBefore + 1);
  const stored = await storedBranch(h.store, 'slow-2');
  expect(stored.messages.map((m) => m.id)).toEqual(turn.messages.map((m) => m.id));
});

it('an aborted signal ends the wait the same way', async () => {
  const chat = sessions.session({ sessionId: 'slow-3' });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 500);
  await expect(chat.send('Where is order 9?', { updateId: 'ask-9', signal: controller.signal })).rejects.toBeInstanceOf(
    UpdateWaitEndedError,
  );
  const turn = await chat.send('Where is order 9?', { updateId: 'ask-9' });
  expect(turn.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect((await storedBranch(h.store, 'slow-3')).messages).toHaveLength(6);
});

it('through temporalRunner, the HTTP client gets the turn that outlasted the RPC deadline: 200, the tool run once', async () => {
  const authenticate: Authenticate = () => ({ tenantId: 'acme', userId: 'ann' });
  const workflow = temporalDesk(h.store, { who: 'server', logFile }); // only opens sessions: turns run on w1
  const served = await serveBaton(createBatonApp({ workflow, authenticate, runner: temporalRunner(sessions) }));
  try {
    const api = httpClient(served.url, 'Bearer acme-ann');
    expect((await api.json('POST', '/sessions', { id: 'web-slow' })).status).toBe(201);
    const runsBefore = (await toolRuns()).length;

    const sent = await api.json('POST', '/sessions/web-slow/messages', { text: 'Where is order 4321?' });

    expect(sent.status).toBe(200);
    expect(sent.body.message.content).toBe('Done: order 4321 ships tomorrow');
    expect(sent.body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await toolRuns()).slice(runsBefore)).toEqual(['look_up_order:w1']);
    const stored = await storedBranch(h.store, 'web-slow', { tenantId: 'acme' });
    expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  } finally {
    await served.close();
  }
});
