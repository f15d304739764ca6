import {
  ConfigurationError,
  type Episode,
  InMemoryStore,
  InvalidInputError,
  type Session,
  type SessionFilter,
  type Store,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { type CloseIdleSessionsResult, closeIdleSessions, EpisodicMemory, startIdleSweep } from '../src/index.js';
import { appendConversation } from './support/conversation.js';

const HOUR = 3_600_000;

/** A real InMemoryStore that also counts the episodes written (saveEpisode calls that stored something new). */
class CountingStore extends InMemoryStore {
  saves = 0;
  written = 0;
  override async saveEpisode(episode: Episode): Promise<boolean> {
    this.saves += 1;
    const created = await super.saveEpisode(episode);
    if (created) this.written += 1;
    return created;
  }
}

/** Sessions idle for two hours (created and last active then), each with a short exchange. */
async function idleSessions(store: Store, count: number, extra: { tenantId?: string } = {}): Promise<string[]> {
  const twoHoursAgo = new Date(Date.now() - 2 * HOUR).toISOString();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${extra.tenantId ?? 'plain'}-idle-${i}`;
    await store.createSession({ id, userId: `u-${i % 3}`, createdAt: twoHoursAgo, ...extra });
    await appendConversation(
      store,
      id,
      [
        { role: 'user', content: `My order ${5000 + i} arrived damaged.` },
        {
          role: 'assistant',
          agent: 'shipping',
          content: `Sorry about order ${5000 + i}; a replacement is on its way.`,
        },
      ],
      extra,
    );
    ids.push(id);
  }
  return ids;
}

describe('closeIdleSessions', () => {
  it('closes idle sessions with reason "idle" and saves an episode of each, leaving active ones open', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory({ store });
    const idle = await idleSessions(store, 3);
    await store.createSession({ id: 'fresh', userId: 'u-1' });

    const result = await memory.closeIdleSessions({ idleFor: HOUR });

    expect(result.closed.sort()).toEqual([...idle].sort());
    expect(result.skipped).toEqual([]);
    expect((await store.getSession('fresh'))?.status).toBe('active');
    for (const id of idle) {
      expect(await store.getSession(id)).toMatchObject({ status: 'closed', closedReason: 'idle' });
      const episode = await store.getEpisode(id);
      expect(episode).toMatchObject({ id, closedReason: 'idle', agents: ['shipping'] });
      expect(episode?.transcript).toHaveLength(2);
    }
    // A second sweep finds nothing left to close.
    expect((await memory.closeIdleSessions({ idleFor: HOUR })).closed).toEqual([]);
  });

  it('two sweeps running at the same time close each idle session once and write exactly one episode per session', async () => {
    const store = new CountingStore();
    const ids = await idleSessions(store, 12);
    // Two memories, as two processes would have.
    const [a, b] = await Promise.all([
      closeIdleSessions({ store, idleFor: HOUR, providers: [new EpisodicMemory()] }),
      closeIdleSessions({ store, idleFor: HOUR, providers: [new EpisodicMemory()] }),
    ]);
    const closedBy = (r: CloseIdleSessionsResult) => new Set(r.closed);
    const both = [...closedBy(a)].filter((id) => closedBy(b).has(id));

    expect(both).toEqual([]); // no session closed twice
    expect([...a.closed, ...b.closed].sort()).toEqual([...ids].sort()); // every idle session closed
    expect(a.skipped.length + b.skipped.length).toBe(ids.length); // each sweep skipped what the other won
    expect(store.saves).toBe(ids.length); // only the winner of a session wrote its episode
    expect(store.written).toBe(ids.length);
    for (const id of ids) expect((await store.getEpisode(id))?.sessionId).toBe(id);
  });

  it('skips a session that saw activity after the sweep listed it', async () => {
    // A real store whose listing is stale by the time the sweep writes: the session is touched in between.
    class TouchedAfterListing extends InMemoryStore {
      override async listSessions(filter: SessionFilter = {}): Promise<Session[]> {
        const listed = await super.listSessions(filter);
        for (const s of listed)
          await this.updateSession(s.id, { lastActivityAt: new Date().toISOString() }, { expectedVersion: s.version });
        return listed;
      }
    }
    const store = new TouchedAfterListing();
    const [id] = await idleSessions(store, 1);
    const result = await closeIdleSessions({ store, idleFor: HOUR, providers: [new EpisodicMemory()] });
    expect(result).toEqual({ closed: [], skipped: [id], failed: [] });
    expect((await store.getSession(id!))?.status).toBe('active');
    expect(await store.getEpisode(id!)).toBeUndefined();
  });

  // A failing provider: the session stays open and is reported failed, never also closed; the next sweep closes it.
  it('sweeps one tenant only when asked; a session whose provider fails stays open, reported failed only', async () => {
    const store = new InMemoryStore();
    const acme = await idleSessions(store, 2, { tenantId: 'acme' });
    const globex = await idleSessions(store, 2, { tenantId: 'globex' });
    const failing = { name: 'broken', onSessionClose: async () => Promise.reject(new Error('disk full')) };
    const result = await closeIdleSessions({ store, idleFor: HOUR, tenantId: 'acme', providers: [failing] });
    expect(result.closed).toEqual([]);
    expect(result.failed.map((f) => [f.sessionId, (f.error as Error).message]).sort()).toEqual(
      acme.map((id) => [id, 'disk full']).sort(),
    );
    for (const id of acme) expect((await store.getSession(id, { tenantId: 'acme' }))?.status).toBe('active');
    for (const id of globex) expect((await store.getSession(id, { tenantId: 'globex' }))?.status).toBe('active');

    const memory = new EpisodicMemory();
    const retried = await closeIdleSessions({ store, idleFor: HOUR, tenantId: 'acme', providers: [memory] });
    expect(retried).toEqual({ closed: expect.arrayContaining(acme), skipped: [], failed: [] });
    for (const id of acme) {
      expect(await store.getEpisode(id, { tenantId: 'acme' })).toMatchObject({ closedReason: 'idle' });
    }
  });

  it('closes idle sessions called as the docs show, { store, idleFor }; each reported once', async () => {
    const store = new InMemoryStore();
    const ids = await idleSessions(store, 2);
    // As a plain-JS caller would: no providers at all.
    const result = await closeIdleSessions({ store, idleFor: HOUR } as Parameters<typeof closeIdleSessions>[0]);
    expect(result).toEqual({ closed: expect.arrayContaining(ids), skipped: [], failed: [] });
    expect(result.closed).toHaveLength(2);
    for (const id of ids) expect((await store.getSession(id))?.status).toBe('closed');
  });

  it('refuses options of the wrong shape with a ConfigurationError naming them, touching no session', async () => {
    const store = new InMemoryStore();
    const [id] = await idleSessions(store, 1);
    const call = (options: unknown) => closeIdleSessions(options as Parameters<typeof closeIdleSessions>[0]);
    await expect(call({ idleFor: HOUR })).rejects.toThrow(ConfigurationError);
    await expect(call({ idleFor: HOUR })).rejects.toThrow(/needs \{ store \}/);
    const providers = new EpisodicMemory();
    await expect(call({ store, idleFor: HOUR, providers })).rejects.toThrow(/providers must be an array/);
    const participants = 'operator';
    await expect(call({ store, idleFor: HOUR, participants })).rejects.toThrow(/participants must be an array/);
    const pendingRequests = 'wait';
    await expect(call({ store, idleFor: HOUR, pendingRequests })).rejects.toThrow(/'answer' or 'skip', not "wait"/);
    await expect(call({ store, idleFor: HOUR, limit: 0 })).rejects.toThrow(ConfigurationError);
    await expect(call(undefined)).rejects.toThrow(ConfigurationError);
    const sweep = { store, every: 1000, idleFor: HOUR, providers: 'memory' };
    expect(() => startIdleSweep(sweep as never)).toThrow(ConfigurationError);
    expect((await store.getSession(id!))?.status).toBe('active');
  });

  it('closes at most `limit` sessions per sweep', async () => {
    const store = new InMemoryStore();
    await idleSessions(store, 3);
    const memory = new EpisodicMemory({ store });
    expect((await memory.closeIdleSessions({ idleFor: HOUR, limit: 2 })).closed).toHaveLength(2);
    expect((await memory.closeIdleSessions({ idleFor: HOUR, limit: 2 })).closed).toHaveLength(1);
  });

  it('rejects a bad idleFor with InvalidInputError', async () => {
    await expect(closeIdleSessions({ store: new InMemoryStore(), idleFor: -1, providers: [] })).rejects.toThrow(
      InvalidInputError,
    );
  });
});

describe('startIdleSweep', () => {
  it('sweeps on its timer until stopped', async () => {
    const store = new InMemoryStore();
    const memory = new EpisodicMemory({ store });
    const ids = await idleSessions(store, 2);
    const swept = new Promise<CloseIdleSessionsResult>((resolve) => {
      const stop = memory.startIdleSweep({
        every: 5,
        idleFor: HOUR,
        onSweep: (result) => {
          if (result.closed.length > 0) void stop().then(() => resolve(result));
        },
      });
    });
    expect((await swept).closed.sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await store.getEpisode(id)).toBeDefined();
  });

  it('rejects a non-positive interval', () => {
    expect(() =>
      new EpisodicMemory({ store: new InMemoryStore() }).startIdleSweep({ every: 0, idleFor: HOUR }),
    ).toThrow(/every must be a positive number/);
  });
});
