import { randomUUID } from 'node:crypto';
import { link, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Episode } from '../../conversation/episode.js';
import { withSchemaVersion } from '../../conversation/schemaVersions.js';
import { isValidId } from '../../ids.js';
import type { EpisodeFilter, TenantScope } from '../store.js';
import { assertEpisode } from '../storeRules.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';
import type { FileDocuments } from './fileDocuments.js';
import { createFileExclusive, fsyncDir, hasErrorCode, mapInBatches, readDirNames } from './fileIo.js';

/**
 * The episodes of `FileStore`. Each episode is one immutable file, `episodes/<id>.json`, created
 * exclusively (a second save of the id keeps the first). An owner index makes `findEpisodes` read
 * only the tenant's (and user's) episodes, not every episode in the store: for each episode a hard
 * link `episodes/by-owner/<tenant>/<user>/<id>.json` to the same file (no second copy of the
 * bytes). An absent tenant or user is the folder `-`, which no valid id can be.
 * `FileStore` wraps each call's I/O errors as `StoreError`.
 */
export class FileEpisodeStore {
  readonly #docs: FileDocuments;

  constructor(docs: FileDocuments) {
    this.#docs = docs;
  }

  get #layout() {
    return this.#docs.layout;
  }

  /** Saves an episode once; a retried save repairs a missing index link. Returns whether it was new. */
  async save(episode: Episode): Promise<boolean> {
    const valid = assertEpisode(episode);
    const file = this.#layout.episodeFile(valid.id);
    const created = await createFileExclusive(file, JSON.stringify(withSchemaVersion('episode', valid)));
    const stored = created ? valid : await this.#docs.readEpisode(valid.id);
    if (stored !== undefined)
      await linkIntoIndex(file, this.#layout.episodeOwnerDir(stored.tenantId, stored.userId), stored.id);
    return created;
  }

  /** The episode, unless it belongs to another tenant. */
  async get(id: string, scope: TenantScope): Promise<Episode | undefined> {
    assertTenantScope(scope);
    const episode = await this.#docs.readEpisode(id);
    return episode !== undefined && inTenant(episode, scope) ? episode : undefined;
  }

  /**
   * Deletes the episode (of this tenant): its owner-index link first, then the file, so a crash in
   * between leaves a file `getEpisode` still finds and a retried delete removes.
   */
  async delete(id: string, scope: TenantScope): Promise<boolean> {
    const episode = await this.get(id, scope);
    if (episode === undefined) return false;
    const ownerDir = this.#layout.episodeOwnerDir(episode.tenantId, episode.userId);
    await rm(join(ownerDir, `${episode.id}.json`), { force: true });
    await rm(this.#layout.episodeFile(episode.id), { force: true });
    await fsyncDir(this.#layout.episodesDir);
    return true;
  }

  /**
   * Deletes every episode of the user in the tenant (`userId` undefined: the tenant's episodes
   * without a user), and with `sessionId`, only those of that session. Returns how many.
   */
  async deleteOwned(scope: TenantScope, userId: string | undefined, sessionId?: string): Promise<number> {
    let deleted = 0;
    for (const name of await readDirNames(this.#layout.episodeOwnerDir(scope.tenantId, userId))) {
      const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
      if (!isValidId(id)) continue;
      const episode = await this.get(id, scope);
      if (
        episode === undefined ||
        episode.userId !== userId ||
        (sessionId !== undefined && episode.sessionId !== sessionId)
      )
        continue;
      if (await this.delete(id, scope)) deleted += 1;
    }
    return deleted;
  }

  /** The tenant's (and user's) episodes, newest `endedAt` first, reading only their index folders. */
  async find(filter: EpisodeFilter): Promise<Episode[]> {
    const tenantDir = this.#layout.episodeOwnerDir(filter.tenantId, undefined, { tenantOnly: true });
    const userDirs =
      filter.userId !== undefined
        ? [this.#layout.episodeOwnerDir(filter.tenantId, filter.userId)]
        : (await readDirNames(tenantDir)).map((name) => join(tenantDir, name));
    const ids = (await Promise.all(userDirs.map(readDirNames))).flat().flatMap((name) => {
      const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
      return isValidId(id) ? [id] : [];
    });
    const episodes = (await mapInBatches(ids, (id) => this.#docs.readEpisode(id))).filter(
      (e): e is Episode =>
        e !== undefined &&
        e.tenantId === filter.tenantId &&
        (filter.userId === undefined || e.userId === filter.userId) &&
        (filter.since === undefined || e.endedAt >= filter.since),
    );
    episodes.sort((a, b) => b.endedAt.localeCompare(a.endedAt));
    return filter.limit === undefined ? episodes : episodes.slice(0, filter.limit);
  }

  /**
   * Builds the owner index of a store written before it existed (once, when `by-owner` is missing):
   * into a temporary folder first, renamed into place, so a crash leaves no half index.
   */
  async ensureIndex(): Promise<void> {
    const index = this.#layout.episodeIndexDir;
    if ((await readDirNames(this.#layout.episodesDir)).includes('by-owner')) return;
    const building = join(this.#layout.episodesDir, `.by-owner-${randomUUID()}`);
    await mkdir(building, { recursive: true });
    const episodes = await this.#docs.allEpisodes();
    for (const episode of episodes) {
      const ownerDir = join(building, ...this.#layout.episodeOwnerPath(episode.tenantId, episode.userId));
      await linkIntoIndex(this.#layout.episodeFile(episode.id), ownerDir, episode.id);
    }
    try {
      await rename(building, index);
      await fsyncDir(this.#layout.episodesDir);
    } catch (error) {
      await rm(building, { recursive: true, force: true });
      // Another process built it first.
      if (!hasErrorCode(error, 'ENOTEMPTY') && !hasErrorCode(error, 'EEXIST')) throw error;
    }
  }
}

/** Hard-links an episode file into an owner folder; an existing link is kept. */
async function linkIntoIndex(file: string, ownerDir: string, id: string): Promise<void> {
  await mkdir(ownerDir, { recursive: true });
  try {
    await link(file, join(ownerDir, `${id}.json`));
  } catch (error) {
    if (!hasErrorCode(error, 'EEXIST')) throw error;
    return;
  }
  await fsyncDir(ownerDir);
}
