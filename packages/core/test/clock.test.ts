import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoNow } from '../src/index.js';

describe('isoNow', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the ISO-8601 text of the current millisecond, like new Date().toISOString()', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-03-04T05:06:07.089Z'));
    expect(isoNow()).toBe('2026-03-04T05:06:07.089Z');
    expect(isoNow()).toBe(new Date().toISOString());
  });

  it('moves on with the clock, by the millisecond', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-03-04T05:06:07.089Z'));
    const first = isoNow();
    vi.setSystemTime(new Date('2026-03-04T05:06:07.090Z'));
    expect(isoNow()).toBe('2026-03-04T05:06:07.090Z');
    vi.setSystemTime(new Date('2026-03-04T05:06:07.089Z'));
    expect(isoNow()).toBe(first);
  });

  it('matches the real clock', () => {
    const before = Date.now();
    const stamp = Date.parse(isoNow());
    expect(stamp).toBeGreaterThanOrEqual(before);
    expect(stamp).toBeLessThanOrEqual(Date.now());
  });
});
