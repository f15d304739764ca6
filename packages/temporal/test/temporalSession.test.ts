import { ConfigurationError, InvalidInputError, NotFoundError, SessionClosedError } from '@baton/core';
import { bundleBatonWorkflows, createBatonWorker, TemporalSessions } from '@baton/temporal';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, storedBranch } from './support/deskHarness.js';
import { temporalDesk } from './support/temporalDesk.js';

// A real Temporal dev server (globalSetup) and MongoStore on FerretDB; the worker runs in this process.
describe('sessions run by a Temporal worker', () => {
  let h: Awaited<ReturnType<typeof harness>>;
  let worker: Worker;
  let running: Promise<void>;
  let sessions: TemporalSessions;

  beforeAll(async () => {
    h = await harness();
    const bundle = await bundleBatonWorkflows();
    const connection = await NativeConnection.connect({ address: h.address });
    worker = await createBatonWorker({
      connection,
      taskQueue: h.taskQueue,
      workflow: temporalDesk(h.store, { who: 'w1' }),
      workflowBundle: bundle,
    });
    running = worker.run();
    sessions = new TemporalSessions({ client: h.client, taskQueue: h.taskQueue });
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await h?.close();
  });

  it('runs a turn as an Update and returns the committed result', async () => {
    const chat = sessions.session({ sessionId: 'chat-1', userId: 'u-1' });
    const turn = await chat.send('Where is order 1234?');
    expect(turn.message?.content).toBe('Done: order 1234 ships tomorrow');
    expect(turn.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(turn.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(turn).toMatchObject({
      completed: true,
      closed: false,
      nextAgent: 'triage',
      pendingRequests: [],
      headSeq: 6,
    });
    const second = await chat.send('And order 99?');
    expect(second.messages.map((m) => m.seq)).toEqual([7, 8, 9, 10, 11, 12]);
    const stored = await storedBranch(h.store, 'chat-1');
    expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(stored.dangling).toEqual([]);
  });

  it('pauses on an approval, takes the answer as an Update, and refuses mistakes by name', async () => {
    const chat = sessions.session({ sessionId: 'chat-2', tenantId: 'acme' });
    const paused = await chat.send('Please refund order 77');
    const [request] = paused.pendingRequests;
    expect(request).toMatchObject({ type: 'tool_approval', toolName: 'refund' });
    await expect(chat.send('hello?')).rejects.toBeInstanceOf(InvalidInputError);
    await expect(chat.respond('no-such-request', { approved: true })).rejects.toBeInstanceOf(NotFoundError);
    await expect(chat.respond(request!.id, 'yes')).rejects.toBeInstanceOf(InvalidInputError);
    const done = await chat.respond(request!.id, { approved: true });
    expect(done.message?.content).toBe('Done: refunded order 77');
    expect(done.pendingRequests).toEqual([]);
    expect((await chat.state()).pending).toEqual([]);
  });

  it('closes the session, completes its workflow, and refuses later turns with SessionClosedError', async () => {
    const chat = sessions.session({ sessionId: 'chat-3' });
    await chat.send('Where is order 5?');
    await chat.close({ reason: 'resolved' });
    expect(await h.store.getSession('chat-3')).toMatchObject({ status: 'closed', closedReason: 'resolved' });
    await expect(chat.send('one more thing')).rejects.toBeInstanceOf(SessionClosedError);
    await expect(sessions.session({ sessionId: 'chat-3' }).send('again')).rejects.toBeInstanceOf(SessionClosedError);
    await chat.close(); // closing twice is a no-op
  });

  it('continues as new every maxOperationsPerRun operations, carrying the head seq and the pending request', async () => {
    const short = new TemporalSessions({ client: h.client, taskQueue: h.taskQueue, maxOperationsPerRun: 2 });
    const chat = short.session({ sessionId: 'chat-4' });
    await chat.send('Where is order 1?');
    const handle = h.client.workflow.getHandle(chat.workflowId);
    const firstRun = (await handle.describe()).runId;
    const paused = await chat.send('Please refund order 2'); // the second operation: the run continues as new
    const [request] = paused.pendingRequests;
    await expect.poll(async () => (await handle.describe()).runId, { timeout: 30_000 }).not.toBe(firstRun);
    expect((await chat.state()).pending.map((r) => r.id)).toEqual([request!.id]);
    const done = await chat.respond(request!.id, { approved: true });
    expect(done.message?.content).toBe('Done: refunded order 2');
    expect(done.messages[0]!.seq).toBe(paused.headSeq + 1);
    const stored = await storedBranch(h.store, 'chat-4');
    expect(stored.messages.map((m) => m.seq)).toEqual(Array.from({ length: done.headSeq }, (_, i) => i + 1));
    expect(stored.dangling).toEqual([]);
  });

  it('streams the committed messages as events while the Update runs, then session.closed', async () => {
    const withStore = new TemporalSessions({ client: h.client, taskQueue: h.taskQueue, store: h.store });
    const chat = withStore.session({ sessionId: 'chat-5' });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of chat.events({ intervalMs: 50 }))
        seen.push(event.type === 'message' ? `${event.message.seq}:${event.message.role}` : event.type);
    })();
    await chat.send('Where is order 1?');
    await chat.close({ reason: 'done' });
    await reading;
    expect(seen).toEqual(['1:user', '2:assistant', '3:tool', '4:assistant', '5:tool', '6:assistant', 'session.closed']);
    expect(() => sessions.session({ sessionId: 'chat-5' }).events()).toThrow(ConfigurationError);
  });
});
