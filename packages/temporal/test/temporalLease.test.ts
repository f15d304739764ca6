import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLiveLease, type Store, StoreError } from '@baton/core';
import { type Authenticate, createBatonApp, resumeCutTurns } from '@baton/server';
import { type ServedBaton, serveBaton } from '@baton/server/node';
import { bundleBatonWorkflows, createBatonWorker, TemporalSessions } from '@baton/temporal';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../server/test/support/httpClient.js';
import { harness, storedBranch } from './support/deskHarness.js';
import { temporalDesk } from './support/temporalDesk.js';

/** A latch: `wait()` resolves once `open()` was called. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait: () => opened, open };
}

const authenticate: Authenticate = (request) => {
  const match = /^Bearer (\w+)-(\w+)$/.exec(request.headers.get('authorization') ?? '');
  return match === null ? undefined : { tenantId: match[1]!, userId: match[2]! };
};

// A Temporal worker (this process) and an in-process Baton server on the same MongoStore (FerretDB):
// a turn run by the worker holds the branch's lease as a turn of another replica does.
describe('the branch lease of a turn run by a Temporal worker', () => {
  const LEASE_TTL_MS = 1_500;
  let h: Awaited<ReturnType<typeof harness>>;
  let dir: string;
  let logFile: string;
  let worker: Worker;
  let running: Promise<void>;
  let server: ServedBaton;
  let sessions: TemporalSessions;
  let workerGate = latch();
  let serverGate = latch();
  let workerLookUps = 0;
  let serverLookUps = 0;

  beforeAll(async () => {
    h = await harness();
    dir = await mkdtemp(join(tmpdir(), 'baton-temporal-lease-'));
    logFile = join(dir, 'tools.log');
    await writeFile(logFile, '');
    const workerDesk = temporalDesk(h.store, {
      who: 'worker',
      logFile,
      onLookUp: () => workerLookUps++,
      gate: () => workerGate.wait(),
    });
    worker = await createBatonWorker({
      connection: await NativeConnection.connect({ address: h.address }),
      taskQueue: h.taskQueue,
      workflow: workerDesk,
      workflowBundle: await bundleBatonWorkflows(),
      leaseTtlMs: LEASE_TTL_MS,
    });
    running = worker.run();
    const serverDesk = temporalDesk(h.store, {
      who: 'server',
      logFile,
      onLookUp: () => serverLookUps++,
      gate: () => serverGate.wait(),
    });
    server = await serveBaton(createBatonApp({ workflow: serverDesk, authenticate }));
    sessions = new TemporalSessions({ client: h.client, taskQueue: h.taskQueue });
  }, 120_000);

  afterAll(async () => {
    workerGate.open();
    serverGate.open();
    await server?.close();
    worker?.shutdown();
    await running;
    await h?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function toolLog(): Promise<string[]> {
    return (await readFile(logFile, 'utf8')).trim().split('\n').filter(Boolean);
  }

  it('refuses an in-process send with 409 while the worker runs a turn on the branch, past the lease TTL', async () => {
    workerGate = latch();
    serverGate.open();
    const api = client(server.url, 'Bearer acme-ann');
    expect((await api.json('POST', '/sessions', { id: 'held-1' })).status).toBe(201);
    const chat = sessions.session({ sessionId: 'held-1', tenantId: 'acme', userId: 'ann' });
    const turn = chat.send('Where is order 1234?');
    await expect.poll(() => workerLookUps, { timeout: 60_000 }).toBe(1);
    // Longer than the lease lasts unrenewed: the worker renews it while its tool runs.
    await new Promise((resolve) => setTimeout(resolve, LEASE_TTL_MS * 2));
    const meanwhile = await api.json('POST', '/sessions/held-1/messages', { text: 'And order 99?' });
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.error.code).toBe('CONCURRENCY');
    // A live lease is no cut turn: the server's reconciler leaves the branch alone.
    expect(await resumeCutTurns({ workflow: temporalDesk(h.store, { who: 'reconciler', logFile }) })).toEqual([]);
    expect(serverLookUps).toBe(0);

    workerGate.open();
    const done = await turn;
    expect(done.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(done.message?.content).toBe('Done: order 1234 ships tomorrow');
    expect(await h.store.getBranchLease('held-1', 'main', { tenantId: 'acme' })).toMatchObject({ held: false });

    const after = await api.json('POST', '/sessions/held-1/messages', { text: 'And order 99?' });
    expect(after.status).toBe(200);
    expect(after.body.messages.map((m: { seq: number }) => m.seq)).toEqual([7, 8, 9, 10, 11, 12]);
    const stored = await storedBranch(h.store, 'held-1', { tenantId: 'acme' });
    expect(stored.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'Where is order 1234?',
      'And order 99?',
    ]);
    expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(stored.dangling).toEqual([]);
    expect(stored.answeredTwice).toEqual([]);
    expect(await toolLog()).toEqual(['look_up_order:worker', 'look_up_order:server']);
  }, 180_000);

  it('makes a Temporal send wait for an in-process turn on the branch, then run at the new head', async () => {
    workerGate.open();
    serverGate = latch();
    await writeFile(logFile, '');
    const api = client(server.url, 'Bearer acme-ann');
    expect((await api.json('POST', '/sessions', { id: 'held-2' })).status).toBe(201);
    const chat = sessions.session({ sessionId: 'held-2', tenantId: 'acme', userId: 'ann' });
    await chat.state(); // the workflow runs and knows the empty branch (head 0)
    const lookUps = serverLookUps;
    const inProcess = api.json('POST', '/sessions/held-2/messages', { text: 'Where is order 1234?' });
    await expect.poll(() => serverLookUps, { timeout: 60_000 }).toBe(lookUps + 1);
    const workerBefore = workerLookUps;
    const viaTemporal = chat.send('And order 99?');
    // The worker's attempts are refused while the server's turn holds the branch: no tool of its runs.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(workerLookUps).toBe(workerBefore);
    serverGate.open();
    const first = await inProcess;
    expect(first.status).toBe(200);
    expect(first.body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    const second = await viaTemporal;
    // Only its own messages: the in-process turn stored before it began is not taken as this operation's.
    expect(second.messages.map((m) => m.seq)).toEqual([7, 8, 9, 10, 11, 12]);
    expect(second.messages[0]).toMatchObject({ role: 'user', content: 'And order 99?' });
    expect(second.message?.content).toBe('Done: order 99 ships tomorrow');
    expect((await chat.state()).headSeq).toBe(12);
    const stored = await storedBranch(h.store, 'held-2', { tenantId: 'acme' });
    expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(stored.dangling).toEqual([]);
    expect(stored.answeredTwice).toEqual([]);
    expect(await toolLog()).toEqual(['look_up_order:server', 'look_up_order:worker']);
  }, 180_000);

  it('aborts an attempt whose lease was taken over (renewals cut off); the retry reads the turn back', async () => {
    // A second worker whose store calls reach FerretDB, except lease renewals while `cutOff`.
    let cutOff = false;
    const cutStore = new Proxy(h.store, {
      get(target, key) {
        if (key === 'renewBranchLease' && cutOff) return () => Promise.reject(new StoreError('renewal cut off'));
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const gate = latch();
    let lookUps = 0;
    const queue = `${h.taskQueue}-cut`;
    const cutWorker = await createBatonWorker({
      connection: await NativeConnection.connect({ address: h.address }),
      taskQueue: queue,
      workflow: temporalDesk(cutStore, { who: 'cut', logFile, onLookUp: () => lookUps++, gate: () => gate.wait() }),
      workflowBundle: await bundleBatonWorkflows(),
      leaseTtlMs: LEASE_TTL_MS,
    });
    const cutRunning = cutWorker.run();
    try {
      await writeFile(logFile, '');
      const api = client(server.url, 'Bearer acme-ann');
      expect((await api.json('POST', '/sessions', { id: 'cut-1' })).status).toBe(201);
      const chat = new TemporalSessions({ client: h.client, taskQueue: queue }).session({
        sessionId: 'cut-1',
        tenantId: 'acme',
        userId: 'ann',
      });
      const turn = chat.send('Where is order 1234?');
      await expect.poll(() => lookUps, { timeout: 60_000 }).toBe(1);
      cutOff = true;
      const scope = { tenantId: 'acme' };
      await expect
        .poll(async () => isLiveLease(await h.store.getBranchLease('cut-1', 'main', scope)), { timeout: 30_000 })
        .toBe(false);
      // The server's reconciler takes the expired lease over and finishes the turn in its process.
      const resumed = await resumeCutTurns({ workflow: temporalDesk(h.store, { who: 'reconciler', logFile }) });
      expect(resumed).toMatchObject([{ sessionId: 'cut-1', outcome: 'resumed' }]);
      cutOff = false;
      gate.open(); // the cut-off attempt's tool ends: its lease is gone, so the attempt fails and is retried

      const done = await turn;
      expect(done.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(done.message?.content).toBe('Done: order 1234 ships tomorrow');
      const stored = await storedBranch(h.store, 'cut-1', scope);
      expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(stored.messages.filter((m) => m.role === 'user')).toHaveLength(1);
      expect(stored.dangling).toEqual([]);
      expect(stored.answeredTwice).toEqual([]);
      expect(lookUps).toBe(1); // the retry ran no tool: it read the finished turn back
      expect(await toolLog()).toContain('look_up_order:reconciler');
      expect(await h.store.getBranchLease('cut-1', 'main', scope)).toMatchObject({ held: false });
    } finally {
      gate.open();
      cutWorker.shutdown();
      await cutRunning;
    }
  }, 180_000);
});
