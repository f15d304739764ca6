import { createHash } from 'node:crypto';

/**
 * A deterministic sample of `n` items stratified by a key (an ABCD flow): the keys take turns, in
 * sorted order, each giving its next item by `sha256("baton-sample:" + id)`, so every flow is
 * represented as evenly as `n` allows and the same file always gives the same sample.
 *
 * @param items anything with an `id`
 * @param n how many to take (all when `n` ≥ the number of items)
 * @param keyOf the stratum of an item (e.g. `(c) => c.flow`)
 * @returns the sampled items, in their original order
 * @example
 * ```ts
 * stratifiedSample(conversations, 20, (c) => c.flow); // 2 per flow of ABCD's 10
 * ```
 */
export function stratifiedSample<T extends { id: string }>(
  items: readonly T[],
  n: number,
  keyOf: (item: T) => string,
): T[] {
  if (n >= items.length) return [...items];
  const rank = (item: T) => createHash('sha256').update(`baton-sample:${item.id}`).digest('hex');
  const strata = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    strata.set(key, [...(strata.get(key) ?? []), item]);
  }
  const queues = [...strata.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, members]) =>
      members
        .map((item) => [rank(item), item] as const)
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map(([, item]) => item),
    );
  const chosen = new Set<T>();
  for (let round = 0; chosen.size < n; round += 1) {
    for (const queue of queues) {
      const item = queue[round];
      if (item !== undefined && chosen.size < n) chosen.add(item);
    }
  }
  return items.filter((item) => chosen.has(item));
}
