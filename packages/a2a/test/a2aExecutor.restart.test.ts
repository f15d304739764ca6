import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { A2AExecutor, type A2AThreadState } from '@baton/a2a';
import { FileStore, RemoteExecutorError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { billingDesk, type RefundLedger, refundDesk } from './support/refundDesk.js';
import { type ServedA2A, serveA2A } from './support/serveA2A.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-a2a-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** The remote side: a billing desk served over A2A on its own FileStore. */
async function startRemote(directory: string, ledger: RefundLedger, port = 0) {
  const store = new FileStore({ directory });
  const served = await serveA2A(billingDesk(store, ledger), port);
  const stop = async () => {
    await served.close();
    await store.close();
  };
  return { served, store, stop };
}

/** The local side: a desk whose billing specialist is the remote A2A agent. */
function startLocal(directory: string, remote: ServedA2A) {
  const store = new FileStore({ directory });
  const billing = new A2AExecutor({
    name: 'billing',
    description: 'Refunds, charges, invoices (remote).',
    url: remote.url,
  });
  return { store, desk: refundDesk(store, billing) };
}

describe('A2AExecutor: a remote A2A agent as a Baton participant', () => {
  it('pauses on the remote input-required, and the remote task goes on after both sides restart', async () => {
    const [localDir, remoteDir] = [await tempDir(), await tempDir()];
    const ledger: RefundLedger = [];
    let remote = await startRemote(remoteDir, ledger);
    const port = remote.served.port;
    let local = startLocal(localDir, remote.served);

    // Turn 1: triage hands off to the remote billing agent, whose refund waits for approval.
    let session = await local.desk.session({ id: 'chat-1' });
    for await (const _ of session.send('I was charged twice for order 1234')) {
      // drained
    }
    const [request] = session.pendingRequests;
    expect(request).toMatchObject({ type: 'user_input', agent: 'billing' });
    expect(request?.type === 'user_input' && request.prompt).toContain('billing asks to approve refund({"amount":40})');
    // The remote task id is kept with the paused turn (in its checkpoint's state patches) before any restart.
    const checkpoint = await local.store.loadCheckpoint('chat-1', 'main');
    const taskId = /"taskId":"([^"]+)"/.exec(JSON.stringify(checkpoint?.statePatches))?.[1];
    expect(taskId).toBeDefined();

    // Both sides restart: new store objects, workflows and server (same port and folders).
    await remote.stop();
    await local.store.close();
    remote = await startRemote(remoteDir, ledger, port);
    cleanups.push(() => remote.stop());
    local = startLocal(localDir, remote.served);
    cleanups.push(() => local.store.close());

    const client = await new ClientFactory().createFromUrl(remote.served.url);
    expect((await client.getTask({ tenant: '', id: taskId! })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    // Turn 2: the user's answer goes to the same remote task, which completes; its answer is billing's reply.
    session = await local.desk.session({ id: 'chat-1' });
    expect(session.pendingRequests.map((r) => r.id)).toEqual([request!.id]);
    const replies: string[] = [];
    for await (const event of session.send('yes')) {
      if (event.type === 'message' && event.message.role === 'assistant' && event.message.content !== '')
        replies.push(event.message.content);
    }
    expect(replies).toEqual(['Done: Refunded 40 EUR.']);
    expect(ledger).toEqual([40]);
    expect(session.pendingRequests).toEqual([]);
    expect((await client.getTask({ tenant: '', id: taskId! })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const after = (await local.store.getBranch('chat-1', 'main'))?.state['a2a:billing'] as A2AThreadState;
    expect(after.taskId).toBeUndefined();
    expect(after.contextId).toBeTruthy();

    // Every tool call in the local history has its result (the remote question included).
    const messages = await local.store.readMessages('chat-1', 'main');
    const calls = messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id);
    const results = messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
    expect(results.sort()).toEqual(calls.sort());
  });

  it('fails the turn with a RemoteExecutorError naming the URL when the remote agent is down', async () => {
    const directory = await tempDir();
    const remote = await startRemote(await tempDir(), []);
    const url = remote.served.url;
    await remote.stop();
    const local = startLocal(directory, remote.served);
    cleanups.push(() => local.store.close());
    const session = await local.desk.session({ id: 'chat-2' });
    const error = await (async () => {
      for await (const _ of session.send('I was charged twice')) {
        // drained
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RemoteExecutorError);
    expect((error as RemoteExecutorError).message).toContain(url);
  });
});
