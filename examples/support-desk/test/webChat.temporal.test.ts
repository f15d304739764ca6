import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sessionWorkflowId } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTemporalServer, type TemporalServer } from '../../../packages/temporal/test/support/temporalServer.js';
import { startWebDesk, type WebDesk } from '../src/chat/webDesk.js';
import { quietTemporalLogs } from '../src/chat/webTemporal.js';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';

// `web --temporal`: the web chat's turns run as Updates of session workflows on a real Temporal dev server,
// by the worker the desk starts in its process, on the desk's FileStore.
let dir: string;
let temporal: TemporalServer;
let desk: WebDesk;
const taskQueue = `desk-${randomUUID().slice(0, 8)}`;

/** The fields of a `TurnResult` the test reads. */
interface Turn {
  messages: { role: string; content: string; seq: number }[];
  pendingRequests: { id: string; type: string; agent: string; prompt?: string; toolName?: string }[];
}

beforeAll(async () => {
  quietTemporalLogs();
  dir = await mkdtemp(join(tmpdir(), 'baton-web-temporal-'));
  temporal = await startTemporalServer();
  desk = await startWebDesk({
    storeDir: join(dir, 'store'),
    distDir: join(dir, 'dist'),
    data: DEMO_DATA_FILE,
    paceMs: 0,
    temporal: { address: temporal.address, taskQueue },
  });
}, 400_000);

afterAll(async () => {
  await desk?.close();
  await temporal?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

it('with --temporal the web chat answers a turn run by a Temporal worker', async () => {
  const headers = { authorization: 'Bearer crystal', 'content-type': 'application/json', accept: 'application/json' };
  const created = await fetch(`${desk.url}/api/sessions`, { method: 'POST', headers, body: '{}' });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const text =
    'This is Crystal Minh. A premium service was added to my account without asking me, and now I am being charged for the service.';
  const response = await fetch(`${desk.url}/api/sessions/${id}/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ text }),
  });
  expect(response.status).toBe(200);
  const turn = (await response.json()) as Turn;
  expect(turn.messages[0]).toMatchObject({ role: 'user', content: text });
  const [question] = turn.pendingRequests;
  expect(question).toMatchObject({ type: 'user_input', agent: 'account' });
  expect(question!.prompt).toContain('How much were you charged');

  // The customer's answer is the next turn, on the same workflow: the refund waits for a supervisor.
  const answered = await fetch(`${desk.url}/api/sessions/${id}/requests/${question!.id}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ text: 'I never signed up for it and I was charged $40.' }),
  });
  expect(answered.status).toBe(200);
  const next = (await answered.json()) as Turn;
  expect(next.pendingRequests).toMatchObject([{ type: 'tool_approval', toolName: 'offer-refund' }]);

  // The turn went through the session's workflow: it runs on the server, waiting for the next message.
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const workflowId = sessionWorkflowId({ sessionId: id, tenantId: 'acme-web', branch: 'main' });
    const described = await new Client({ connection }).workflow.getHandle(workflowId).describe();
    expect(described.status.name).toBe('RUNNING');
    expect(described.taskQueue).toBe(taskQueue);
  } finally {
    await connection.close();
  }
  // The page reads the session as without the flag.
  const view = await fetch(`${desk.url}/api/sessions/${id}`, { headers });
  expect(await view.json()).toMatchObject({
    headSeq: next.messages.at(-1)!.seq,
    running: false,
    pendingRequests: [{ type: 'tool_approval', toolName: 'offer-refund' }],
  });
}, 300_000);
