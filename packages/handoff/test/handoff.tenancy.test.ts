import { CheckpointInUseError, InvalidInputError, NotFoundError, type Store } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, disposeStores, embeddedStores, lastOf, ofType, scriptedAgent } from './support/helpers.js';
import { approvalDesk } from './support/scenarioDesks.js';

/** Where each store method that names a session takes its tenant: the argument index (its `tenantId` field). */
const SCOPE_ARGUMENT: Record<string, number> = {
  createSession: 0,
  getSession: 1,
  updateSession: 2,
  appendMessages: 3,
  readMessages: 2,
  forkBranch: 2,
  getBranch: 2,
  listBranches: 1,
  updateBranch: 3,
  deleteBranch: 2,
  saveCheckpoint: 1,
  putPendingWrites: 4,
  loadCheckpoint: 3,
  listCheckpoints: 2,
  pruneCheckpoints: 3,
  deleteCheckpoint: 3,
  writeBatch: 0,
};

/** The store seen through a Proxy that records, for every call, its method and the tenant it carried. */
function scopeRecorder(inner: Store): { store: Store; calls: { method: string; tenantId: unknown }[] } {
  const calls: { method: string; tenantId: unknown }[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        const at = SCOPE_ARGUMENT[prop];
        calls.push({
          method: prop,
          tenantId: at === undefined ? 'not a session call' : (args[at] as { tenantId?: string } | undefined)?.tenantId,
        });
        return value.apply(target, args);
      };
    },
  }) as Store;
  return { store, calls };
}

/** Billing asks the user one question, then answers; a checkpoint after every step, all kept. */
function questionDesk(store: Store) {
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user' ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] } : { text: '?' },
  );
  const billing = scriptedAgent('billing', (request) =>
    request.messages.some((m) => m.role === 'tool' && m.toolName === 'request_user_input')
      ? { text: 'All sorted.' }
      : { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Which card?' } }] },
  );
  return new HandoffBuilder()
    .participants(triage, billing)
    .store(store)
    .checkpoints({ every: 'step', keep: 'all' })
    .build();
}

describe.each(embeddedStores())('tenancy through the handoff API on %s', (_name, makeStore) => {
  afterAll(disposeStores);

  it("carries the session's tenant on every store call, and refuses another tenant's session like another user's", async () => {
    const inner = await makeStore();
    const { store, calls } = scopeRecorder(inner);
    const refunds: string[] = [];
    const { workflow } = approvalDesk(store, refunds);
    const session = await workflow.session({ id: 'chat-1', tenantId: 'acme', userId: 'u-1' });
    const [request] = ofType(await collect(session.send('Refund my double charge')), 'request');
    await collect(session.respond(request!.request.id, { approved: true }));
    expect(refunds).toEqual(['refund 40']);
    const fork = await session.fork({ atSeq: session.messages.at(-1)!.seq, branchId: 'retry' });
    await collect(fork.send('Refund it again'));
    const [oldest] = await session.checkpoints();
    await session.rewind(oldest!.id, { branchId: 'rewound' });
    await session.branches();
    await session.deleteBranch('rewound');
    await session.restore(oldest!.id);
    await session.deleteCheckpoint(oldest!.id);

    const acme = { tenantId: 'acme' };
    const before = await inner.readMessages('chat-1', 'main', acme);
    await expect(workflow.session({ id: 'chat-1', tenantId: 'globex', userId: 'u-1' })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(workflow.session({ id: 'chat-1', tenantId: 'globex' })).rejects.toThrow(/belongs to another tenant/);
    await expect(workflow.session({ id: 'chat-1' })).rejects.toThrow(InvalidInputError);
    await expect(workflow.session({ id: 'chat-1', tenantId: 'globex', create: false })).rejects.toThrow(NotFoundError);
    await expect(workflow.session({ id: 'chat-1', tenantId: 'acme', userId: 'u-2', branch: 'main' })).rejects.toThrow(
      /another user/,
    );
    await session.close({ reason: 'resolved' });

    const acmeCalls = calls.filter((c) => c.tenantId !== 'globex' && c.method !== 'createSession');
    // Only the open without a tenant looked without one: before its create, and after the create found the id taken.
    expect(acmeCalls.filter((c) => c.tenantId !== 'acme')).toEqual([
      { method: 'getSession', tenantId: undefined },
      { method: 'getSession', tenantId: undefined },
    ]);
    // appendMessages: the close answers the refund call still waiting for approval on the 'retry' fork.
    expect(new Set(acmeCalls.map((c) => c.method))).toEqual(
      new Set([
        'appendMessages',
        'getSession',
        'getBranch',
        'readMessages',
        'loadCheckpoint',
        'listBranches',
        'updateSession',
        'writeBatch',
        'saveCheckpoint',
        'putPendingWrites',
        'forkBranch',
        'listCheckpoints',
        'deleteBranch',
        'deleteCheckpoint',
      ]),
    );
    expect((await inner.getSession('chat-1', acme))?.status).toBe('closed');
    expect((await inner.readMessages('chat-1', 'main', acme)).slice(0, before.length)).toEqual(before);
    expect(await inner.getSession('chat-1', { tenantId: 'globex' })).toBeUndefined();
  });

  it('deletes an older checkpoint through session.deleteCheckpoint and refuses the newest, which the paused turn resumes from', async () => {
    const store = await makeStore();
    const workflow = questionDesk(store);
    const session = await workflow.session({ id: 'chat-2', tenantId: 'acme' });
    const [question] = ofType(await collect(session.send('I was charged twice')), 'request');
    const manifest = await session.checkpoints();
    expect(manifest.length).toBeGreaterThanOrEqual(2);
    const oldest = manifest[0]!;
    const newest = manifest.at(-1)!;

    expect(await session.deleteCheckpoint(oldest.id)).toBe(true);
    expect((await session.checkpoints()).map((c) => c.id)).toEqual(manifest.slice(1).map((c) => c.id));
    expect(await session.deleteCheckpoint(oldest.id)).toBe(false);
    await expect(session.deleteCheckpoint(newest.id)).rejects.toBeInstanceOf(CheckpointInUseError);

    const reopened = await questionDesk(store).session({ id: 'chat-2', tenantId: 'acme' });
    expect(reopened.pendingRequests.map((r) => r.id)).toEqual([question!.request.id]);
    const answer = await collect(reopened.respond(question!.request.id, 'the visa card'));
    expect(answer.at(-1)).toMatchObject({ type: 'turn.completed' });
    expect(reopened.messages.at(-1)).toMatchObject({ agent: 'billing', content: 'All sorted.' });
  });
});
