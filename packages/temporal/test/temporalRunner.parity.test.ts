import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AssetRef, InvalidInputError, type Message } from '@baton/core';
import { type Authenticate, createBatonApp } from '@baton/server';
import { type ServedBaton, serveBaton } from '@baton/server/node';
import {
  batonFailure,
  bundleBatonWorkflows,
  sendUpdate,
  sessionWorkflowId,
  TemporalSessions,
  temporalRunner,
} from '@baton/temporal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { client } from '../../server/test/support/httpClient.js';
import { harness } from './support/deskHarness.js';
import { temporalDesk } from './support/temporalDesk.js';
import { startWorkerProcess, type WorkerProcess } from './support/workerProcess.js';

// The same conversation through createBatonApp with the Temporal runner (a worker process, the real dev
// server) and with the in-process runner, on one MongoStore: what a user sees and what is stored match.
let h: Awaited<ReturnType<typeof harness>>;
let dir: string;
let worker: WorkerProcess | undefined;
const servers: ServedBaton[] = [];
let onTemporal: ReturnType<typeof client>;
let inProcess: ReturnType<typeof client>;

const authenticate: Authenticate = (request) => {
  const match = /^Bearer (\w+)-(\w+)$/.exec(request.headers.get('authorization') ?? '');
  return match === null ? undefined : { tenantId: match[1]!, userId: match[2]! };
};

beforeAll(async () => {
  h = await harness();
  dir = await mkdtemp(join(tmpdir(), 'baton-temporal-parity-'));
  const bundlePath = join(dir, 'workflows.js');
  const logFile = join(dir, 'tools.log');
  await writeFile(logFile, '');
  await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
  const args = [h.address, h.taskQueue, mongoTestUrl(), h.dbName, 'worker', logFile, bundlePath];
  worker = await startWorkerProcess(args, 240_000);
  const sessions = new TemporalSessions({ client: h.client, taskQueue: h.taskQueue, store: h.store });
  const desk = (who: string) => temporalDesk(h.store, { who, logFile });
  for (const app of [
    createBatonApp({ workflow: desk('server'), authenticate, runner: temporalRunner(sessions) }),
    createBatonApp({ workflow: desk('in-process'), authenticate }),
  ])
    servers.push(await serveBaton(app));
  onTemporal = client(servers[0]!.url, 'Bearer acme-ann');
  inProcess = client(servers[1]!.url, 'Bearer acme-ann');
}, 300_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await worker?.kill();
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Uploads a receipt to `sessionId` (the server's asset route) and returns its reference. */
async function upload(api: ReturnType<typeof client>, sessionId: string): Promise<AssetRef> {
  const response = await api.call('POST', `/sessions/${sessionId}/assets?name=receipt.png`, 'not really a png', {
    'content-type': 'image/png',
  });
  expect(response.status).toBe(201);
  return (await response.json()) as AssetRef;
}

/** A conversation's turn events and stored messages: a message with an asset, a paused refund, its approval, one more message. */
async function converse(api: ReturnType<typeof client>, sessionId: string) {
  expect((await api.json('POST', '/sessions', { id: sessionId })).status).toBe(201);
  const receipt = await upload(api, sessionId);
  const turns: [string, number][][] = [];
  const sse = async (path: string, body: unknown) => {
    const { status, events } = await api.stream('POST', path, body);
    expect(status).toBe(200);
    turns.push(events.filter((e) => e.event.startsWith('turn.')).map((e) => [e.event, e.data.turn]));
    return events;
  };
  await sse(`/sessions/${sessionId}/messages`, { text: 'Where is order 1234?', assets: [receipt.id] });
  const paused = await sse(`/sessions/${sessionId}/messages`, { text: 'Please refund order 77' });
  const request = paused.find((e) => e.event === 'request')!.data.request;
  await sse(`/sessions/${sessionId}/requests/${request.id}`, { approved: true });
  await sse(`/sessions/${sessionId}/messages`, { text: 'And order 99?' });
  const stored = await h.store.readMessages(sessionId, 'main', { tenantId: 'acme' });
  return { receipt, turns, stored };
}

/** A stored message without what differs between two sessions by design (ids, times, the asset's and request's own). */
function comparable(message: Message) {
  const { id: _id, createdAt: _at, durationMs: _ms, toolCallId, toolCalls, metadata, ...rest } = message;
  const assets = metadata?.assets as AssetRef[] | undefined;
  const answered = metadata?.answeredRequest as { id: string; createdAt: string } | undefined;
  return {
    ...rest,
    ...(toolCallId === undefined ? {} : { toolCallId: 'call' }),
    ...(toolCalls === undefined ? {} : { toolCalls: toolCalls.map(({ id: _, ...call }) => call) }),
    ...(metadata === undefined
      ? {}
      : {
          metadata: {
            ...metadata,
            ...(assets === undefined
              ? {}
              : { assets: assets.map(({ id: _, sessionId: _s, createdAt: _c, ...ref }) => ref) }),
            ...(answered === undefined ? {} : { answeredRequest: { ...answered, id: 'request', createdAt: 'at' } }),
          },
        }),
  };
}

describe('temporalRunner matches the in-process runner', () => {
  let temporal: Awaited<ReturnType<typeof converse>>;
  let local: Awaited<ReturnType<typeof converse>>;

  beforeAll(async () => {
    temporal = await converse(onTemporal, 'par-t');
    local = await converse(inProcess, 'par-i');
  }, 240_000);

  it('stores a message with assets as in-process: its references in metadata.assets, exactly as uploaded', () => {
    const [first] = temporal.stored;
    expect(first).toMatchObject({ role: 'user', content: 'Where is order 1234?' });
    expect(first!.metadata).toEqual({ assets: [temporal.receipt] });
    expect(local.stored[0]!.metadata).toEqual({ assets: [local.receipt] });
    expect(temporal.stored.map(comparable)).toEqual(local.stored.map(comparable));
  });

  it('numbers turn.started and turn.completed as in-process', () => {
    expect(local.turns).toEqual([
      [
        ['turn.started', 1],
        ['turn.completed', 1],
      ],
      [
        ['turn.started', 2],
        ['turn.completed', 2], // paused on the approval
      ],
      [
        ['turn.started', 2],
        ['turn.completed', 2],
      ],
      [
        ['turn.started', 3],
        ['turn.completed', 3],
      ],
    ]);
    expect(temporal.turns).toEqual(local.turns);
  });

  it('refuses bad assets by name: 400 over HTTP, InvalidInputError from TemporalSession and the raw Update', async () => {
    const unknown = await onTemporal.json('POST', '/sessions/par-t/messages', { text: 'hi', assets: ['no-such'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_INPUT');

    const sessions = new TemporalSessions({ client: h.client, taskQueue: h.taskQueue });
    const chat = sessions.session({ sessionId: 'par-t', tenantId: 'acme', userId: 'ann' });
    await expect(chat.send('hi', { assets: [{ id: 'x' } as unknown as AssetRef] })).rejects.toThrow(InvalidInputError);
    await expect(chat.send('hi', { assets: [local.receipt] })).rejects.toThrow(/belongs to session "par-i"/);

    // A caller of the Update itself: the worker checks again, the Update fails with INVALID_INPUT.
    const handle = h.client.workflow.getHandle(sessionWorkflowId({ sessionId: 'par-t', tenantId: 'acme' }));
    const raw = await handle
      .executeUpdate(sendUpdate, { args: [{ text: 'hi', assets: [{ id: 'x' } as unknown as AssetRef] }] })
      .catch(batonFailure);
    expect(raw).toBeInstanceOf(InvalidInputError);
    const after = await h.store.readMessages('par-t', 'main', { tenantId: 'acme' });
    expect(after).toHaveLength(temporal.stored.length);
  });
});
