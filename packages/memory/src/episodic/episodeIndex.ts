import type { Episode } from '@baton/core';
import { type LexicalHit, LexicalIndex, type LexicalMatchOptions } from '../search/lexicalIndex.js';

/** The parts of an episode lexical recall searches. */
export type EpisodeField = 'user' | 'assistant' | 'summary' | 'keywords';

/** Settings of lexical recall (MiniSearch's BM25+ ranking through {@link LexicalIndex}). */
export interface LexicalRecallOptions extends LexicalMatchOptions {
  /** Boost per field; a field with boost 0 is not searched. Default 1 for each field. */
  fields?: Partial<Record<EpisodeField, number>>;
}

/**
 * The default of {@link LexicalRecallOptions.fields}: every field boost 1. On the ABCD recall
 * benchmark (test/bench/recall.bench.ts) other boosts (user text ×2 or ×3, summary ×2, user text
 * only) changed recall@1 by at most a few queries in 400, so the simplest setting is kept.
 */
export const DEFAULT_FIELD_BOOSTS: Readonly<Record<EpisodeField, number>> = {
  user: 1,
  assistant: 1,
  summary: 1,
  keywords: 1,
};

/**
 * A full-text index over episodes: a {@link LexicalIndex} (MiniSearch, BM25+ scoring, terms
 * lowercased, stop words left out, stemmed) over their user and assistant lines, summary and keywords.
 * Queries are OR-combined, with prefix and fuzzy matching as configured.
 *
 * @example
 * ```ts
 * const index = new EpisodeIndex(await store.findEpisodes({ tenantId, userId }));
 * index.search('what happened with my refund?', 3); // [{ id: 'chat-81', score: 7.3 }, …]
 * ```
 */
export class EpisodeIndex {
  /** How many episodes it indexes. */
  readonly size: number;
  readonly #index: LexicalIndex<EpisodeField>;

  /**
   * @param episodes the episodes to index (their user and assistant lines, summary and keywords)
   * @param options `{ fields?, fuzzy?, prefix?, stem?, stopWords? }` ({@link LexicalRecallOptions})
   */
  constructor(episodes: readonly Episode[], options: LexicalRecallOptions = {}) {
    const { fields, ...match } = options;
    this.#index = new LexicalIndex({ ...DEFAULT_FIELD_BOOSTS, ...fields }, match);
    for (const episode of episodes) this.#index.add(episode.id, toFields(episode));
    this.size = episodes.length;
  }

  /**
   * The `k` best-matching episodes, best first; episodes matching no query term are left out.
   * @param query free text, e.g. the user's new message
   * @param k the most hits to return
   * @returns `{ id, score }` hits, best first; `[]` when every field boost is 0
   */
  search(query: string, k: number): LexicalHit[] {
    return this.#index.search(query, k);
  }
}

function toFields(episode: Episode): Record<EpisodeField, string> {
  const text = (role: 'user' | 'assistant') =>
    episode.transcript
      .filter((line) => line.role === role)
      .map((line) => line.content)
      .join('\n');
  const keywords = episode.keywords.join(' ');
  return { user: text('user'), assistant: text('assistant'), summary: episode.summary, keywords };
}
