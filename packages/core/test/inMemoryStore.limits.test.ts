import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, InMemoryStore } from '../src/index.js';
import { makeMessages } from './support/storeFixtures.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('InMemoryStore with maxSessions and idleTtlMs', () => {
  it('makes room by removing a closed session first, with its messages; the others stay', async () => {
    const store = new InMemoryStore({ maxSessions: 3 });
    for (const id of ['a', 'b', 'c']) await store.createSession({ id });
    await store.appendMessages('b', 'main', makeMessages(1, 2));
    const b = (await store.getSession('b'))!;
    await store.updateSession(
      'b',
      { status: 'closed', closedAt: new Date().toISOString() },
      { expectedVersion: b.version },
    );
    await store.createSession({ id: 'd' });
    expect(store.size).toBe(3);
    expect(await store.getSession('b')).toBeUndefined();
    expect((await store.listSessions()).map((s) => s.id).sort()).toEqual(['a', 'c', 'd']);
  });

  it('removes sessions idle for idleTtlMs, least recently used first; a session read or written since is kept', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const store = new InMemoryStore({ maxSessions: 3, idleTtlMs: 1_000 });
    for (const id of ['a', 'b', 'c']) await store.createSession({ id });
    vi.setSystemTime(new Date('2026-01-01T00:00:02Z'));
    await store.appendMessages('a', 'main', makeMessages(1, 1)); // a is in use again
    await store.createSession({ id: 'd' }); // b is the least recently used idle session
    expect((await store.listSessions()).map((s) => s.id).sort()).toEqual(['a', 'c', 'd']);
    await store.createSession({ id: 'e' }); // then c
    expect((await store.listSessions()).map((s) => s.id).sort()).toEqual(['a', 'd', 'e']);
    expect(await store.readMessages('a', 'main')).toHaveLength(1);
  });

  it('never removes a session in use: with none closed or idle it holds more than maxSessions', async () => {
    const store = new InMemoryStore({ maxSessions: 2, idleTtlMs: 60_000 });
    for (const id of ['a', 'b', 'c']) await store.createSession({ id });
    expect(store.size).toBe(3);
    expect((await store.listSessions()).map((s) => s.id).sort()).toEqual(['a', 'b', 'c']);
  });

  it('keeps episodes of removed sessions (they are the memory of closed conversations)', async () => {
    const store = new InMemoryStore({ maxSessions: 1 });
    await store.createSession({ id: 'a', userId: 'u-1' });
    const now = new Date().toISOString();
    await store.saveEpisode({
      id: 'a',
      sessionId: 'a',
      userId: 'u-1',
      startedAt: now,
      endedAt: now,
      closedReason: 'resolved',
      agents: [],
      transcript: [],
      summary: 's',
      keywords: [],
      metadata: {},
    });
    const a = (await store.getSession('a'))!;
    await store.updateSession('a', { status: 'closed', closedAt: now }, { expectedVersion: a.version });
    await store.createSession({ id: 'b' });
    expect(await store.getSession('a')).toBeUndefined();
    expect((await store.getEpisode('a'))?.summary).toBe('s');
  });

  it('refuses limits that are not positive', () => {
    expect(() => new InMemoryStore({ maxSessions: 0 })).toThrow(ConfigurationError);
    expect(() => new InMemoryStore({ idleTtlMs: -1 })).toThrow(ConfigurationError);
  });
});
