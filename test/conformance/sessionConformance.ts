import { ConcurrencyError, NotFoundError, type Session } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { type ConformanceContext, createSessionWithMessages, createTestSession } from './conformanceContext.js';
import { isoFromNow, makeCheckpoint, uniqueId } from './fixtures.js';

/** Sessions: create/get, compare-and-set updates, listing, deletes. */
export function describeSessionConformance(context: ConformanceContext): void {
  describe('sessions', () => {
    it('creates a session at version 1 with its main branch, and reads it back equal', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const created = await store.createSession({
        id: uniqueId('s'),
        tenantId,
        userId: 'u-42',
        metadata: { channel: 'web', tags: ['vip'] },
        state: { verified: false },
        createdAt: '2025-01-01T10:00:00.000Z',
      });
      expect(created).toMatchObject({
        tenantId,
        userId: 'u-42',
        status: 'active',
        version: 1,
        createdAt: '2025-01-01T10:00:00.000Z',
        lastActivityAt: '2025-01-01T10:00:00.000Z',
        metadata: { channel: 'web', tags: ['vip'] },
        state: { verified: false },
      });
      expect(await store.getSession(created.id, { tenantId })).toEqual(created);
      expect(await store.getSession(created.id)).toBeUndefined(); // no tenant given: only sessions without one
      const branches = await store.listBranches(created.id, { tenantId });
      expect(branches.map((b) => b.id)).toEqual(['main']);
      expect(branches[0]).toMatchObject({ sessionId: created.id, version: 1, state: {} });
      expect(branches[0]?.parent).toBeUndefined();
    });

    it('defaults createdAt to now and metadata and state to empty objects', async () => {
      const before = new Date().toISOString();
      const created = await createTestSession(context.store);
      expect(created.createdAt >= before).toBe(true);
      expect(created.metadata).toEqual({});
      expect(created.state).toEqual({});
      expect(created.tenantId).toBeUndefined();
    });

    it('refuses to create a session whose id exists, keeping the first', async () => {
      const { store } = context;
      const first = await createTestSession(store, { metadata: { first: true } });
      await expect(store.createSession({ id: first.id, metadata: { first: false } })).rejects.toBeInstanceOf(
        ConcurrencyError,
      );
      expect((await store.getSession(first.id))?.metadata).toEqual({ first: true });
    });

    it('returns undefined for a session that does not exist', async () => {
      expect(await context.store.getSession(uniqueId('missing'))).toBeUndefined();
    });

    it('updates with compare-and-set: the version grows by one and a stale version is refused', async () => {
      const { store } = context;
      const created = await createTestSession(store);
      const updated = await store.updateSession(
        created.id,
        { state: { verified: true }, metadata: { step: 1 } },
        { expectedVersion: 1 },
      );
      expect(updated).toMatchObject({ id: created.id, version: 2, state: { verified: true }, metadata: { step: 1 } });
      const closed = await store.updateSession(
        created.id,
        { status: 'closed', closedAt: '2025-02-01T00:00:00.000Z', closedReason: 'resolved' },
        { expectedVersion: 2 },
      );
      expect(closed).toMatchObject({
        version: 3,
        status: 'closed',
        closedReason: 'resolved',
        state: { verified: true },
      });
      await expect(
        store.updateSession(created.id, { state: { verified: false } }, { expectedVersion: 2 }),
      ).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.getSession(created.id)).toEqual(closed);
    });

    it('lets exactly one of two updates with the same expected version win', async () => {
      const { store } = context;
      const created = await createTestSession(store);
      const results = await Promise.allSettled([
        store.updateSession(created.id, { metadata: { writer: 'a' } }, { expectedVersion: 1 }),
        store.updateSession(created.id, { metadata: { writer: 'b' } }, { expectedVersion: 1 }),
      ]);
      const won = results.filter((r): r is PromiseFulfilledResult<Session> => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toBeInstanceOf(ConcurrencyError);
      const stored = await store.getSession(created.id);
      expect(stored?.version).toBe(2);
      expect(stored?.metadata).toEqual(won[0]?.value.metadata);
    });

    it('refuses to update a session that does not exist', async () => {
      await expect(
        context.store.updateSession(uniqueId('missing'), { state: {} }, { expectedVersion: 1 }),
      ).rejects.toBeInstanceOf(NotFoundError);
    });

    it('never lets a change overwrite the id, tenant or version', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const created = await createTestSession(store, { tenantId });
      const otherId = uniqueId('other');
      const sneaky = { state: { a: 1 }, id: otherId, tenantId: uniqueId('t'), version: 99 } as Parameters<
        typeof store.updateSession
      >[1];
      const updated = await store.updateSession(created.id, sneaky, { expectedVersion: 1, tenantId });
      expect(updated).toMatchObject({ id: created.id, tenantId, version: 2, state: { a: 1 } });
      expect(await store.getSession(created.id, { tenantId })).toEqual(updated);
      expect(await store.getSession(otherId)).toBeUndefined();
    });

    it('gives copies: changing a returned session changes nothing stored', async () => {
      const { store } = context;
      const created = await createTestSession(store, { metadata: { tags: ['a'] } });
      (created.metadata.tags as string[]).push('mutated');
      const read = await store.getSession(created.id);
      expect(read?.metadata).toEqual({ tags: ['a'] });
      (read!.metadata.tags as string[]).push('mutated');
      expect((await store.getSession(created.id))?.metadata).toEqual({ tags: ['a'] });
    });

    it('lists sessions by tenant, user, status and activeBefore, most recently active first, with a limit', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const userId = uniqueId('u');
      const old = await createTestSession(store, { tenantId, userId, createdAt: '2024-01-01T00:00:00.000Z' });
      const middle = await createTestSession(store, { tenantId, userId, createdAt: '2024-06-01T00:00:00.000Z' });
      const recent = await createTestSession(store, { tenantId, userId, createdAt: '2025-01-01T00:00:00.000Z' });
      const otherUser = await createTestSession(store, {
        tenantId,
        userId: uniqueId('u'),
        createdAt: '2025-03-01T00:00:00.000Z',
      });
      await store.updateSession(
        middle.id,
        { status: 'closed', lastActivityAt: '2025-02-01T00:00:00.000Z' },
        { expectedVersion: 1, tenantId },
      );

      const byTenant = await store.listSessions({ tenantId });
      expect(byTenant.map((s) => s.id)).toEqual([otherUser.id, middle.id, recent.id, old.id]);
      expect((await store.listSessions({ tenantId, userId })).map((s) => s.id)).toEqual([middle.id, recent.id, old.id]);
      expect((await store.listSessions({ tenantId, status: 'active' })).map((s) => s.id)).toEqual([
        otherUser.id,
        recent.id,
        old.id,
      ]);
      expect((await store.listSessions({ tenantId, status: 'closed' })).map((s) => s.id)).toEqual([middle.id]);
      expect(
        (await store.listSessions({ tenantId, activeBefore: '2025-01-15T00:00:00.000Z' })).map((s) => s.id),
      ).toEqual([recent.id, old.id]);
      expect((await store.listSessions({ tenantId, limit: 2 })).map((s) => s.id)).toEqual([otherUser.id, middle.id]);
      expect(byTenant[1]).toEqual(await store.getSession(middle.id, { tenantId }));
    });

    it('deletes a session with its messages and checkpoints; a new session may then take the id', async () => {
      const { store } = context;
      const { session } = await createSessionWithMessages(store, 3);
      await store.saveCheckpoint(makeCheckpoint({ sessionId: session.id, throughSeq: 3 }));
      expect(await store.deleteSession(session.id)).toBe(true);
      expect(await store.getSession(session.id)).toBeUndefined();
      await expect(store.readMessages(session.id, 'main')).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.deleteSession(session.id)).toBe(false);

      const again = await store.createSession({ id: session.id });
      expect(again.version).toBe(1);
      expect(await store.readMessages(session.id, 'main')).toEqual([]);
      expect(await store.loadCheckpoint(session.id, 'main')).toBeUndefined();
      expect(await store.listCheckpoints(session.id, 'main')).toEqual([]);
      expect((await store.listBranches(session.id)).map((b) => b.id)).toEqual(['main']);
    });

    it('deletes inactive sessions of a tenant; a dry run deletes nothing', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const idle1 = await createTestSession(store, { tenantId, createdAt: isoFromNow(-3 * 3_600_000) });
      const idle2 = await createTestSession(store, { tenantId, createdAt: isoFromNow(-2 * 3_600_000) });
      const active = await createTestSession(store, { tenantId });
      const otherTenant = { tenantId: uniqueId('t') };
      const otherTenantIdle = await createTestSession(store, { ...otherTenant, createdAt: isoFromNow(-3 * 3_600_000) });

      const planned = await store.deleteInactiveSessions({ idleFor: 3_600_000, dryRun: true, tenantId });
      expect([...planned].sort()).toEqual([idle1.id, idle2.id].sort());
      for (const id of [idle1.id, idle2.id, active.id]) expect(await store.getSession(id, { tenantId })).toBeDefined();

      const deleted = await store.deleteInactiveSessions({ idleFor: 3_600_000, tenantId });
      expect([...deleted].sort()).toEqual([idle1.id, idle2.id].sort());
      expect(await store.getSession(idle1.id, { tenantId })).toBeUndefined();
      expect(await store.getSession(idle2.id, { tenantId })).toBeUndefined();
      expect(await store.getSession(active.id, { tenantId })).toBeDefined();
      expect(await store.getSession(otherTenantIdle.id, otherTenant)).toBeDefined();
    });
  });
}
