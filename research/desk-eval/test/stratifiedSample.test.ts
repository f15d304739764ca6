import { describe, expect, it } from 'vitest';
import { stratifiedSample } from '../src/stratifiedSample.js';

// 30 items of flow a, 6 of b, 4 of c, in file order a…a b…b c…c.
const items = [
  ...Array.from({ length: 30 }, (_, i) => ({ id: `a-${i}`, flow: 'a' })),
  ...Array.from({ length: 6 }, (_, i) => ({ id: `b-${i}`, flow: 'b' })),
  ...Array.from({ length: 4 }, (_, i) => ({ id: `c-${i}`, flow: 'c' })),
];
const count = (sample: typeof items) =>
  Object.fromEntries(['a', 'b', 'c'].map((flow) => [flow, sample.filter((item) => item.flow === flow).length]));

describe('stratifiedSample', () => {
  it('takes the flows in turn instead of the first lines', () => {
    expect(count(stratifiedSample(items, 9, (item) => item.flow))).toEqual({ a: 3, b: 3, c: 3 });
    expect(count(stratifiedSample(items, 10, (item) => item.flow))).toEqual({ a: 4, b: 3, c: 3 });
  });

  it('fills up from the larger flows once a small one is used up', () => {
    expect(count(stratifiedSample(items, 20, (item) => item.flow))).toEqual({ a: 10, b: 6, c: 4 });
  });

  it('is deterministic, keeps the original order, and does not depend on the file order', () => {
    const sample = stratifiedSample(items, 7, (item) => item.flow);
    expect(stratifiedSample(items, 7, (item) => item.flow)).toEqual(sample);
    expect(sample.map((item) => items.indexOf(item))).toEqual(
      [...sample.map((item) => items.indexOf(item))].sort((x, y) => x - y),
    );
    const reversed = stratifiedSample([...items].reverse(), 7, (item) => item.flow);
    expect(new Set(reversed.map((item) => item.id))).toEqual(new Set(sample.map((item) => item.id)));
    // Not simply the first items of each flow.
    expect(sample.filter((item) => item.flow === 'a').map((item) => item.id)).not.toEqual(['a-0', 'a-1', 'a-2']);
  });

  it('returns everything when n is at least the number of items, and nothing for 0', () => {
    expect(stratifiedSample(items, 40, (item) => item.flow)).toEqual(items);
    expect(stratifiedSample(items, 0, (item) => item.flow)).toEqual([]);
  });
});
