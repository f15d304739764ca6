import { describe, expect, it } from 'vitest';
import { ConcurrencyError, InMemoryStore, NotFoundError, TurnLease } from '../src/index.js';

/** The reason `signal` is aborted with, or `undefined` when it is still live after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

describe('TurnLease.lost: a lease lost and a session gone stay apart', () => {
  it('a lease taken over aborts lost with ConcurrencyError', async () => {
    const store = new InMemoryStore();
    await store.createSession({ id: 'taken' });
    const lease = await TurnLease.take(store, 'taken', 'main', {}, { owner: 'a', ttlMs: 150 });
    await store.releaseBranchLease('taken', 'main', { owner: 'a', epoch: lease.epoch });
    await store.acquireBranchLease('taken', 'main', { owner: 'b', ttlMs: 60_000 });
    expect(await abortedWithin(lease.lost, 1_000)).toBeInstanceOf(ConcurrencyError);
    await lease.release();
    expect(await store.getBranchLease('taken', 'main')).toMatchObject({ owner: 'b', held: true });
  });

  it('a session deleted under a running turn aborts lost with NotFoundError, taken and adopted alike', async () => {
    const store = new InMemoryStore();
    await store.createSession({ id: 'gone' });
    const lease = await TurnLease.take(store, 'gone', 'main', {}, { owner: 'a', ttlMs: 150 });
    const adopted = await TurnLease.adopt(store, 'gone', 'main', {}, { owner: 'a', epoch: lease.epoch, ttlMs: 150 });
    expect(adopted).toBeDefined();
    expect(await store.deleteSession('gone')).toBe(true);
    expect(await abortedWithin(lease.lost, 1_000)).toBeInstanceOf(NotFoundError);
    expect(await abortedWithin(adopted!.lost, 1_000)).toBeInstanceOf(NotFoundError);
    // Releasing what is gone is quiet: the turn's cleanup does not fail.
    await expect(lease.release()).resolves.toBeUndefined();
    await expect(adopted!.release()).resolves.toBeUndefined();
  });
});
