import type { Episode } from '../../conversation/episode.js';
import { assertValidId } from '../../ids.js';
import { cloneData } from '../cloneData.js';
import type { EpisodeFilter, TenantScope } from '../store.js';
import { assertEpisode } from '../storeRules.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';

/**
 * {@link InMemoryStore}'s episodes: copied in and out, scoped to a tenant, newest first. The map is
 * the store's (its session deletion and `eraseUser` remove episodes from it too).
 */
export class InMemoryEpisodes {
  /** Every episode by id (the stored copies). */
  readonly byId = new Map<string, Episode>();

  /** @returns `false` when an episode with that id is stored already (nothing changes) */
  save(episode: Episode): boolean {
    const valid = assertEpisode(episode);
    if (this.byId.has(valid.id)) return false;
    this.byId.set(valid.id, cloneData(valid));
    return true;
  }

  get(id: string, scope: TenantScope): Episode | undefined {
    assertValidId('episode', id);
    assertTenantScope(scope);
    const episode = this.byId.get(id);
    if (episode === undefined || !inTenant(episode, scope)) return undefined;
    return cloneData(episode);
  }

  delete(id: string, scope: TenantScope): boolean {
    assertValidId('episode', id);
    assertTenantScope(scope);
    const episode = this.byId.get(id);
    return episode !== undefined && inTenant(episode, scope) && this.byId.delete(id);
  }

  /** The tenant's episodes matching `filter`, newest `endedAt` first, at most `filter.limit`. */
  find(filter: EpisodeFilter): Episode[] {
    const found = [...this.byId.values()].filter(
      (e) =>
        e.tenantId === filter.tenantId &&
        (filter.userId === undefined || e.userId === filter.userId) &&
        (filter.since === undefined || e.endedAt >= filter.since),
    );
    found.sort((a, b) => b.endedAt.localeCompare(a.endedAt));
    return cloneData(filter.limit === undefined ? found : found.slice(0, filter.limit));
  }
}
