import { type Episode, InvalidInputError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import type { ConformanceContext } from './conformanceContext.js';
import { makeEpisode, uniqueId } from './fixtures.js';

/** Episodes: idempotent saves, lookups, newest-first search. */
export function describeEpisodeConformance(context: ConformanceContext): void {
  describe('episodes', () => {
    it('saves an episode once: a second save returns false and keeps the first', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const episode = {
        ...makeEpisode({ tenantId, userId: 'u-1' }),
        embedding: [0.25, -0.5],
        metadata: { channel: 'web' },
      };
      expect(await store.saveEpisode(episode)).toBe(true);
      expect(await store.saveEpisode({ ...episode, summary: 'a different summary' })).toBe(false);
      expect(await store.getEpisode(episode.id, { tenantId })).toEqual(episode);
      expect(await store.getEpisode(episode.id)).toBeUndefined(); // no tenant given: only episodes without one
      expect(await store.getEpisode(uniqueId('missing'))).toBeUndefined();
    });

    it('finds a tenant episodes by user and since, newest endedAt first, with a limit', async () => {
      const { store } = context;
      const tenantId = uniqueId('t');
      const userId = uniqueId('u');
      const at = (month: number) => `2025-${String(month).padStart(2, '0')}-01T00:00:00.000Z`;
      const jan = makeEpisode({ tenantId, userId, endedAt: at(1) });
      const mar = makeEpisode({ tenantId, userId, endedAt: at(3) });
      const feb = makeEpisode({ tenantId, userId, endedAt: at(2) });
      const otherUser = makeEpisode({ tenantId, userId: uniqueId('u'), endedAt: at(4) });
      const otherTenant = makeEpisode({ tenantId: uniqueId('t'), userId, endedAt: at(5) });
      for (const episode of [jan, mar, feb, otherUser, otherTenant]) await store.saveEpisode(episode);

      const idsOf = (episodes: Episode[]) => episodes.map((e) => e.id);
      expect(idsOf(await store.findEpisodes({ tenantId }))).toEqual([otherUser.id, mar.id, feb.id, jan.id]);
      expect(idsOf(await store.findEpisodes({ tenantId, userId }))).toEqual([mar.id, feb.id, jan.id]);
      expect(idsOf(await store.findEpisodes({ tenantId, userId, since: at(2) }))).toEqual([mar.id, feb.id]);
      expect(idsOf(await store.findEpisodes({ tenantId, userId, limit: 2 }))).toEqual([mar.id, feb.id]);
      expect(await store.findEpisodes({ tenantId, userId, since: at(1) }).then((found) => found[0])).toEqual(mar);
    });

    it('refuses an episode that fails its schema or has operator keys in its metadata', async () => {
      const { store } = context;
      const episode = makeEpisode({ tenantId: uniqueId('t') });
      await expect(store.saveEpisode({ ...episode, transcript: 'none' } as unknown as Episode)).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      await expect(store.saveEpisode({ ...episode, metadata: { $set: { x: 1 } } })).rejects.toBeInstanceOf(
        InvalidInputError,
      );
      expect(await store.getEpisode(episode.id)).toBeUndefined();
    });
  });
}
