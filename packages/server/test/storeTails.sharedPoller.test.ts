import { type EventLogEntry, InMemoryStore, type Store } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatonApp } from '../src/index.js';
import { type ServedBaton, serveBaton } from '../src/node.js';
import { client, readEvents } from './support/httpClient.js';
import { serverDesk } from './support/serverDesk.js';

/** The store, with its `readEvents` and `getBranchLease` calls counted (a wrapper object over the real store). */
function countedReads(store: Store) {
  const counts = { readEvents: 0, getBranchLease: 0 };
  const wrapped = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'readEvents' || property === 'getBranchLease') counts[property]++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, counts };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const POLL_MS = 50;
let server: ServedBaton | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('followers of a turn run by another process share one store poller per branch', () => {
  it('eight clients following one branch cost one lease read and one log read per interval, and each gets every event once', async () => {
    const real = new InMemoryStore();
    const { store, counts } = countedReads(real);
    const { workflow } = serverDesk(store);
    server = await serveBaton(createBatonApp({ workflow, events: { pollMs: POLL_MS } }));
    const api = client(server.url, '');
    expect((await api.json('POST', '/sessions', { id: 'chat-1' })).status).toBe(201);
    // Another replica runs a turn on the branch: it holds the lease and writes the event log.
    const lease = await real.acquireBranchLease('chat-1', 'main', { owner: 'replica-b', ttlMs: 60_000 });
    const epoch = lease.lease.epoch;
    const streams = await Promise.all(
      Array.from({ length: 8 }, () =>
        api.call('GET', '/sessions/chat-1/events', undefined, { accept: 'text/event-stream' }),
      ),
    );
    const received = streams.map((response) => readEvents(response));
    await sleep(2 * POLL_MS); // every follower is polling
    const before = { ...counts };
    await sleep(10 * POLL_MS);
    const reads = counts.readEvents - before.readEvents;
    const leaseReads = counts.getBranchLease - before.getBranchLease;
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(11); // one per interval, not one per follower (8 × 10)
    expect(leaseReads).toBeLessThanOrEqual(11);

    const entries: EventLogEntry[] = ['Your ', 'refund ', 'is on its way.'].map((delta, i) => ({
      position: { epoch, seq: 0, index: i + 1 },
      event: { type: 'message.delta', sessionId: 'chat-1', branchId: 'main', agent: 'billing', delta },
    }));
    await real.appendEvents('chat-1', 'main', entries.slice(0, 2));
    await sleep(3 * POLL_MS);
    await real.appendEvents('chat-1', 'main', entries.slice(2));
    await real.releaseBranchLease('chat-1', 'main', { owner: 'replica-b', epoch });
    for (const events of await Promise.all(received)) {
      expect(events.map((e) => e.id)).toEqual([
        `chat-1/main/${epoch}:0.1`,
        `chat-1/main/${epoch}:0.2`,
        `chat-1/main/${epoch}:0.3`,
      ]);
      expect(events.map((e) => e.data.delta).join('')).toBe('Your refund is on its way.');
    }
  });
});
