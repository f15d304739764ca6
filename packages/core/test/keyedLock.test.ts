/**
 * `KeyedLock` (`@baton/core/store-kit`): callers of one key take turns in the order they came, a
 * free key is taken without waiting, other keys are not held up, a key is dropped once nobody holds
 * or waits for it, and `idle()` waits for every holder, those queued meanwhile included.
 */
import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../src/store-kit/index.js';

/** Lets queued promise reactions run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedLock', () => {
  it('takes a free key at once, and refuses a held one to tryAcquire', () => {
    const locks = new KeyedLock();
    const release = locks.tryAcquire('chat-1');
    expect(release).toBeTypeOf('function');
    expect(locks.tryAcquire('chat-1')).toBeUndefined();
    expect(locks.tryAcquire('chat-2')).toBeTypeOf('function'); // another key is free
    release!();
    expect(locks.tryAcquire('chat-1')).toBeTypeOf('function'); // dropped on release: free again
  });

  it('hands a key on first come, first served, one holder at a time', async () => {
    const locks = new KeyedLock();
    const order: string[] = [];
    let holding = 0;
    const hold = async (name: string) => {
      const release = await locks.acquire('chat-1');
      holding += 1;
      expect(holding).toBe(1);
      order.push(name);
      await settle();
      holding -= 1;
      release();
    };
    await Promise.all(['a', 'b', 'c', 'd'].map(hold));
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(locks.tryAcquire('chat-1')).toBeTypeOf('function');
  });

  it('a waiter queued behind a holder gets the key when, and only when, it is released', async () => {
    const locks = new KeyedLock();
    const first = locks.tryAcquire('chat-1')!;
    let second: (() => void) | undefined;
    void locks.acquire('chat-1').then((release) => {
      second = release;
    });
    await settle();
    expect(second).toBeUndefined();
    expect(locks.tryAcquire('chat-1')).toBeUndefined(); // a waiter keeps the key taken
    first();
    first(); // a second call does nothing
    await settle();
    expect(second).toBeTypeOf('function');
    expect(locks.tryAcquire('chat-1')).toBeUndefined();
    second!();
    expect(locks.tryAcquire('chat-1')).toBeTypeOf('function');
  });

  it('idle() waits for every holder, those that queue while it waits included', async () => {
    const locks = new KeyedLock();
    const events: string[] = [];
    const release = locks.tryAcquire('chat-1')!;
    const idle = locks.idle().then(() => events.push('idle'));
    void locks.acquire('chat-2').then(async (release2) => {
      await settle();
      // Queued while idle() waits: idle() waits for it too.
      void locks.acquire('chat-1').then((release3) => {
        events.push('third');
        release3();
      });
      events.push('second');
      release2();
    });
    await settle();
    expect(events).toEqual([]);
    release();
    await idle;
    expect(events).toEqual(['second', 'third', 'idle']);
    expect(locks.tryAcquire('chat-1')).toBeTypeOf('function');
    await expect(new KeyedLock().idle()).resolves.toBeUndefined(); // nothing held: at once
  });
});
