/** MongoStore's episode operations (collection `episodes`, `_id` = episode id). */
import { assertValidId, type Episode, type EpisodeFilter, type TenantScope } from '@baton/core';
import { assertEpisode, parseStoredEpisode, SCHEMA_VERSIONS } from '@baton/core/store-kit';
import type { Filter } from 'mongodb';
import { assertTimestamp, assertWholeNumber, optionsObject, tenantMatch } from '../collections/inputGuards.js';
import type { EpisodeDoc } from '../collections/mongoCollections.js';
import type { MongoContext } from '../collections/mongoContext.js';
import { isDuplicateKeyError, misplacedDocument } from '../collections/mongoErrors.js';

/**
 * An episode as the API returns it: checked as strictly as `saveEpisode` checks it, without `_id` and `order`.
 * @throws {DocumentCorruptError} when a field fails the rules or `id` is not the document's `_id`
 */
export function toEpisode(doc: EpisodeDoc): Episode {
  const document = `episode document ${JSON.stringify(doc._id)}`;
  const episode = parseStoredEpisode(doc, document);
  if (episode.id !== doc._id) throw misplacedDocument(document, 'id', episode.id);
  return episode;
}

/** One `insertOne`; a duplicate id keeps the first episode and returns `false`. */
export async function saveEpisode(context: MongoContext, input: Episode): Promise<boolean> {
  const episode = assertEpisode(input);
  try {
    await context.collections.episodes.insertOne({
      schemaVersion: SCHEMA_VERSIONS.episode,
      ...episode,
      _id: episode.id,
      order: context.newOrder(),
    });
    return true;
  } catch (error) {
    if (isDuplicateKeyError(error)) return false;
    throw error;
  }
}

/** One read of the episode, `undefined` when missing or another tenant's; see `Store.getEpisode`. */
export async function getEpisode(context: MongoContext, id: string, scope?: TenantScope): Promise<Episode | undefined> {
  const doc = await context.collections.episodes.findOne({ _id: assertValidId('episode', id), ...tenantMatch(scope) });
  return doc === null ? undefined : toEpisode(doc);
}

/** One `deleteOne` with the tenant in its filter; see `Store.deleteEpisode`. */
export async function deleteEpisode(context: MongoContext, id: string, scope?: TenantScope): Promise<boolean> {
  const result = await context.collections.episodes.deleteOne({
    _id: assertValidId('episode', id),
    ...tenantMatch(scope),
  });
  return result.deletedCount > 0;
}

/** Episodes of exactly this tenant (no tenant: episodes without one), newest `endedAt` first. */
export async function findEpisodes(context: MongoContext, filterInput: EpisodeFilter): Promise<Episode[]> {
  const input = optionsObject('The episode filter', filterInput);
  const filter: Filter<EpisodeDoc> = { ...tenantMatch(input) };
  if (input.userId !== undefined) filter.userId = assertValidId('user', input.userId);
  if (input.since !== undefined) filter.endedAt = { $gte: assertTimestamp('since', input.since) };
  const limit = input.limit === undefined ? undefined : assertWholeNumber('limit', input.limit, 0);
  if (limit === 0) return [];
  const cursor = context.collections.episodes.find(filter).sort({ endedAt: -1, order: 1 });
  if (limit !== undefined) cursor.limit(limit);
  return (await cursor.toArray()).map(toEpisode);
}
