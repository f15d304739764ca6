import {
  type BatonEvent,
  type BranchLeaseStore,
  type EventLogEntry,
  type EventLogStore,
  InvalidIdError,
  InvalidInputError,
  NotFoundError,
  type Store,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { type ConformanceContext, createTestSession } from './conformanceContext.js';
import { uniqueId } from './fixtures.js';

function capable(context: ConformanceContext): Store & EventLogStore & BranchLeaseStore {
  const { store } = context;
  for (const method of [
    'appendEvents',
    'readEvents',
    'pruneEvents',
    'acquireBranchLease',
    'renewBranchLease',
    'releaseBranchLease',
    'getBranchLease',
    'listExpiredLeases',
  ] as const) {
    if (typeof store[method] !== 'function') throw new Error(`The ${store.kind} store has no ${method}.`);
  }
  return store as Store & EventLogStore & BranchLeaseStore;
}

const delta = (sessionId: string, text: string): BatonEvent => ({
  type: 'message.delta',
  sessionId,
  branchId: 'main',
  agent: 'triage',
  delta: text,
});
const entries = (sessionId: string, epoch: number, seq: number, from: number, count: number): EventLogEntry[] =>
  Array.from({ length: count }, (_, i) => ({
    position: { epoch, seq, index: from + i },
    event: delta(sessionId, `${epoch}.${seq}.${from + i}`),
  }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Branch leases (compare-and-set, epochs, expiry) and the bounded per-branch event log. */
export function describeBranchLogConformance(context: ConformanceContext): void {
  describe('branch leases', () => {
    it('one owner at a time; renew and release need the owner and epoch; each acquisition grows the epoch', async () => {
      const store = capable(context);
      const tenant = { tenantId: uniqueId('t') };
      const { id } = await createTestSession(store, tenant);
      const a = await store.acquireBranchLease(id, 'main', { owner: 'a', ttlMs: 10_000, ...tenant });
      expect(a).toMatchObject({
        acquired: true,
        lease: { owner: 'a', epoch: 1, held: true, tenantId: tenant.tenantId },
      });
      const b = await store.acquireBranchLease(id, 'main', { owner: 'b', ttlMs: 10_000, ...tenant });
      expect(b).toMatchObject({ acquired: false, lease: { owner: 'a', epoch: 1 } });
      expect(await store.renewBranchLease(id, 'main', { owner: 'b', epoch: 1, ttlMs: 10_000, ...tenant })).toBe(false);
      expect(await store.renewBranchLease(id, 'main', { owner: 'a', epoch: 1, ttlMs: 10_000, ...tenant })).toBe(true);
      expect(await store.releaseBranchLease(id, 'main', { owner: 'a', epoch: 1, ...tenant })).toBe(true);
      expect(await store.releaseBranchLease(id, 'main', { owner: 'a', epoch: 1, ...tenant })).toBe(false);
      expect(await store.getBranchLease(id, 'main', tenant)).toMatchObject({ owner: 'a', epoch: 1, held: false });
      expect(await store.acquireBranchLease(id, 'main', { owner: 'b', ttlMs: 10_000, ...tenant })).toMatchObject({
        acquired: true,
        lease: { owner: 'b', epoch: 2 },
      });
    });

    it("getBranchLease of a missing session or branch (or another tenant's) is undefined, like getBranch", async () => {
      const store = capable(context);
      const tenant = { tenantId: uniqueId('t') };
      const { id } = await createTestSession(store, tenant);
      await store.acquireBranchLease(id, 'main', { owner: 'a', ttlMs: 10_000, ...tenant });
      expect(await store.getBranchLease(uniqueId('missing'), 'main')).toBeUndefined();
      expect(await store.getBranchLease(uniqueId('missing'), 'main', tenant)).toBeUndefined();
      expect(await store.getBranchLease(id, 'no-such-branch', tenant)).toBeUndefined();
      expect(await store.getBranchLease(id, 'main', { tenantId: uniqueId('other') })).toBeUndefined();
      expect(await store.getBranchLease(id, 'main')).toBeUndefined();
      await expect(store.getBranchLease('../escape', 'main', tenant)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.getBranchLease(id, '../escape', tenant)).rejects.toBeInstanceOf(InvalidIdError);
      // The changes stay strict: a lease is never taken on a session or branch that does not exist.
      await expect(
        store.acquireBranchLease(uniqueId('missing'), 'main', { owner: 'a', ttlMs: 10_000 }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        store.acquireBranchLease(id, 'no-such-branch', { owner: 'a', ttlMs: 10_000, ...tenant }),
      ).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.getBranchLease(id, 'main', tenant)).toMatchObject({ owner: 'a', epoch: 1, held: true });
    });

    it('renew and release: false for a lease lost (taken over, released), NotFoundError for a session or branch gone', async () => {
      const store = capable(context);
      const tenant = { tenantId: uniqueId('t') };
      const { id } = await createTestSession(store, tenant);
      await store.forkBranch(id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 0 } }, tenant);
      const held = { owner: 'a', epoch: 1, ...tenant };
      await store.acquireBranchLease(id, 'main', { owner: 'a', ttlMs: 10_000, ...tenant });
      await store.acquireBranchLease(id, 'alt', { owner: 'a', ttlMs: 10_000, ...tenant });
      // Lost, the session and branch still there: false, never an error.
      expect(await store.renewBranchLease(id, 'main', { ...held, epoch: 2, ttlMs: 10_000 })).toBe(false);
      expect(await store.releaseBranchLease(id, 'main', { ...held, owner: 'b' })).toBe(false);
      // Gone (never created, another tenant's, deleted): NotFoundError, as acquireBranchLease.
      const gone = async (sessionId: string, branchId: string, scope: { tenantId?: string }) => {
        await expect(
          store.renewBranchLease(sessionId, branchId, { owner: 'a', epoch: 1, ttlMs: 10_000, ...scope }),
        ).rejects.toBeInstanceOf(NotFoundError);
        await expect(
          store.releaseBranchLease(sessionId, branchId, { owner: 'a', epoch: 1, ...scope }),
        ).rejects.toBeInstanceOf(NotFoundError);
      };
      await gone(uniqueId('missing'), 'main', tenant);
      await gone(id, 'no-such-branch', tenant);
      await gone(id, 'main', { tenantId: uniqueId('other') });
      await gone(id, 'main', {});
      // Another tenant's calls changed nothing: the lease is still held, and its owner renews it.
      expect(await store.getBranchLease(id, 'main', tenant)).toMatchObject({ owner: 'a', epoch: 1, held: true });
      expect(await store.renewBranchLease(id, 'main', { ...held, ttlMs: 10_000 })).toBe(true);
      await store.deleteBranch(id, 'alt', tenant);
      await gone(id, 'alt', tenant);
      expect(await store.deleteSession(id, tenant)).toBe(true);
      await gone(id, 'main', tenant);
      await expect(
        store.renewBranchLease('../escape', 'main', { owner: 'a', epoch: 1, ttlMs: 10_000 }),
      ).rejects.toBeInstanceOf(InvalidIdError);
    });

    it('an expired lease is listed and taken over by exactly one of several racing processes', async () => {
      const store = capable(context);
      const { id } = await createTestSession(store);
      const cut = await store.acquireBranchLease(id, 'main', { owner: 'dead', ttlMs: 400 });
      expect(cut.acquired).toBe(true);
      expect(await store.acquireBranchLease(id, 'main', { owner: 'early', ttlMs: 1000, expired: true })).toMatchObject({
        acquired: false,
      });
      await sleep(450);
      const expired = await store.listExpiredLeases({ before: new Date().toISOString() });
      expect(expired.filter((lease) => lease.sessionId === id)).toEqual([
        expect.objectContaining({ sessionId: id, branchId: 'main', owner: 'dead', epoch: 1, held: true }),
      ]);
      const racers = await Promise.all(
        ['r1', 'r2', 'r3', 'r4'].map((owner) =>
          store.acquireBranchLease(id, 'main', { owner, ttlMs: 10_000, expired: true }),
        ),
      );
      expect(racers.filter((r) => r.acquired)).toHaveLength(1);
      expect(await store.renewBranchLease(id, 'main', { owner: 'dead', epoch: 1, ttlMs: 10_000 })).toBe(false);
      const after = await store.listExpiredLeases({ before: new Date().toISOString() });
      expect(after.filter((lease) => lease.sessionId === id)).toEqual([]);
    });
  });

  describe('event log', () => {
    it('reads back the batches in order after any position, refuses positions out of order, keeps tenants apart', async () => {
      const store = capable(context);
      const tenant = { tenantId: uniqueId('t') };
      const { id } = await createTestSession(store, tenant);
      expect(await store.readEvents(id, 'main', tenant)).toEqual({ entries: [], start: undefined });
      await store.appendEvents(id, 'main', entries(id, 1, 4, 1, 3), tenant);
      await store.appendEvents(
        id,
        'main',
        [...entries(id, 1, 4, 4, 1), { position: { epoch: 1, seq: 5, index: 0 }, event: delta(id, 'm') }],
        tenant,
      );
      await store.appendEvents(id, 'main', entries(id, 2, 4, 1, 2), tenant); // a cut turn re-run: a new epoch
      const all = await store.readEvents(id, 'main', tenant);
      expect(all.start).toEqual({ epoch: 1, seq: 4, index: 0 });
      expect(all.entries.map((e) => e.position)).toEqual([
        { epoch: 1, seq: 4, index: 1 },
        { epoch: 1, seq: 4, index: 2 },
        { epoch: 1, seq: 4, index: 3 },
        { epoch: 1, seq: 4, index: 4 },
        { epoch: 1, seq: 5, index: 0 },
        { epoch: 2, seq: 4, index: 1 },
        { epoch: 2, seq: 4, index: 2 },
      ]);
      expect(all.entries[0]!.event).toEqual(delta(id, '1.4.1'));
      const tail = await store.readEvents(id, 'main', { after: { epoch: 1, seq: 4, index: 3 }, ...tenant });
      expect(tail.entries.map((e) => e.position.index)).toEqual([4, 0, 1, 2]);
      await expect(store.appendEvents(id, 'main', entries(id, 2, 4, 2, 1), tenant)).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.readEvents(id, 'main', { tenantId: uniqueId('other') })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      await expect(
        store.appendEvents(id, 'main', entries(id, 3, 1, 1, 1), { tenantId: uniqueId('other') }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.appendEvents(uniqueId('missing'), 'main', entries(id, 3, 1, 1, 1))).rejects.toBeInstanceOf(
        NotFoundError,
      );
      expect((await store.readEvents(id, 'main', tenant)).entries).toHaveLength(7);
    });

    it('prunes whole batches beyond maxEvents or maxAgeMs, the newest always kept; start moves past what was dropped', async () => {
      const store = capable(context);
      const { id } = await createTestSession(store);
      for (let i = 0; i < 5; i++) await store.appendEvents(id, 'main', entries(id, 1, 1, i * 10 + 1, 10));
      expect(await store.pruneEvents(id, 'main', { maxEvents: 25 })).toBe(30);
      const kept = await store.readEvents(id, 'main');
      expect(kept.entries).toHaveLength(20);
      expect(kept.start).toEqual({ epoch: 1, seq: 1, index: 30 });
      await sleep(30);
      expect(await store.pruneEvents(id, 'main', { maxAgeMs: 10 })).toBe(10);
      expect((await store.readEvents(id, 'main')).entries.map((e) => e.position.index)).toEqual(
        Array.from({ length: 10 }, (_, i) => 41 + i),
      );
    });

    it('deleteBranch removes its event log and lease: none listed as expired, a new fork of it has none', async () => {
      const store = capable(context);
      const tenant = { tenantId: uniqueId('t') };
      const { id } = await createTestSession(store, tenant);
      const fork = { branchId: 'alt', parent: { branchId: 'main', atSeq: 0 } };
      await store.forkBranch(id, fork, tenant);
      await store.appendEvents(id, 'alt', entries(id, 1, 0, 1, 2), tenant);
      await store.acquireBranchLease(id, 'alt', { owner: 'cut', ttlMs: 1, ...tenant });
      await store.acquireBranchLease(id, 'main', { owner: 'cut', ttlMs: 1, ...tenant });
      await store.deleteBranch(id, 'alt', tenant);
      // Its log is gone with it: appends and prunes are refused by name, and write nothing.
      await expect(store.appendEvents(id, 'alt', entries(id, 1, 0, 3, 1), tenant)).rejects.toBeInstanceOf(
        NotFoundError,
      );
      await expect(store.pruneEvents(id, 'alt', { maxEvents: 0 }, tenant)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.readEvents(id, 'alt', tenant)).rejects.toBeInstanceOf(NotFoundError);
      await sleep(5);
      const expired = await store.listExpiredLeases({ before: new Date().toISOString() });
      expect(expired.filter((lease) => lease.sessionId === id).map((lease) => lease.branchId)).toEqual(['main']);
      await store.forkBranch(id, fork, tenant);
      expect(await store.getBranchLease(id, 'alt', tenant)).toBeUndefined();
      expect(await store.readEvents(id, 'alt', tenant)).toEqual({ entries: [], start: undefined });
      expect(await store.acquireBranchLease(id, 'alt', { owner: 'next', ttlMs: 10_000, ...tenant })).toMatchObject({
        acquired: true,
        lease: { epoch: 1 },
      });
    });

    it('deleteSession removes the branch event logs and leases with the session', async () => {
      const store = capable(context);
      const { id } = await createTestSession(store);
      await store.appendEvents(id, 'main', entries(id, 1, 0, 1, 2));
      await store.acquireBranchLease(id, 'main', { owner: 'gone', ttlMs: 1 });
      expect(await store.deleteSession(id)).toBe(true);
      await store.createSession({ id });
      expect(await store.readEvents(id, 'main')).toEqual({ entries: [], start: undefined });
      expect(await store.getBranchLease(id, 'main')).toBeUndefined();
    });
  });
}
