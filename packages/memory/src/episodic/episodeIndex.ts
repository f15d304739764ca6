import type { Episode } from '@baton/core';
import MiniSearch from 'minisearch';
import { normalizeTerm } from './textTerms.js';

/** The parts of an episode lexical recall searches. */
export type EpisodeField = 'user' | 'assistant' | 'summary' | 'keywords';

/** Settings of lexical recall (MiniSearch's BM25+ ranking). */
export interface LexicalRecallOptions {
  /** Boost per field; a field with boost 0 is not searched. Default 1 for each field. */
  fields?: Partial<Record<EpisodeField, number>>;
  /** Fuzzy matching as MiniSearch takes it: a fraction of the term length as edit distance (default 0.2), or `false`. */
  fuzzy?: number | false;
  /** Whether a query term also matches longer terms it starts (default true). */
  prefix?: boolean;
  /** Whether words are reduced to their Porter stem (default true). */
  stem?: boolean;
  /** Whether English and chat stop words are left out (default true). */
  stopWords?: boolean;
}

/**
 * The default of {@link LexicalRecallOptions.fields}: every field boost 1. On the ABCD recall
 * benchmark (test/bench/recall.bench.ts) other boosts (user text ×2 or ×3, summary ×2, user text
 * only) changed recall@1 by at most a few queries in 400, so the simplest setting is kept.
 */
export const DEFAULT_FIELD_BOOSTS: Readonly<Record<EpisodeField, number>> = { user: 1, assistant: 1, summary: 1, keywords: 1 };

/** One lexical match: the episode id and its BM25+ score (unbounded, higher is better). */
export interface LexicalHit {
  id: string;
  score: number;
}

const FIELDS: EpisodeField[] = ['user', 'assistant', 'summary', 'keywords'];

/**
 * A full-text index over episodes (MiniSearch, BM25+ scoring) with terms normalised by
 * {@link normalizeTerm}: lowercased, English and chat stop words left out, stemmed. Queries are OR-combined,
 * with prefix and fuzzy matching as configured.
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
  readonly #search: MiniSearch;
  readonly #options: Required<LexicalRecallOptions>;

  /**
   * @param episodes the episodes to index (their user and assistant lines, summary and keywords)
   * @param options `{ fields?, fuzzy?, prefix?, stem?, stopWords? }` ({@link LexicalRecallOptions})
   */
  constructor(episodes: readonly Episode[], options: LexicalRecallOptions = {}) {
    this.#options = {
      fields: { ...DEFAULT_FIELD_BOOSTS, ...options.fields },
      fuzzy: options.fuzzy ?? 0.2,
      prefix: options.prefix ?? true,
      stem: options.stem ?? true,
      stopWords: options.stopWords ?? true,
    };
    const termOptions = { stem: this.#options.stem, stopWords: this.#options.stopWords };
    this.#search = new MiniSearch({ fields: FIELDS, storeFields: [], processTerm: (term) => normalizeTerm(term, termOptions) });
    this.#search.addAll(episodes.map(toDocument));
    this.size = episodes.length;
  }

  /**
   * The `k` best-matching episodes, best first; episodes matching no query term are left out.
   * @param query free text, e.g. the user's new message
   * @param k the most hits to return
   * @returns `{ id, score }` hits, best first; `[]` when every field boost is 0
   */
  search(query: string, k: number): LexicalHit[] {
    const boost: Record<string, number> = {};
    const fields = FIELDS.filter((f) => (this.#options.fields[f] ?? 0) > 0);
    for (const f of fields) boost[f] = this.#options.fields[f]!;
    if (fields.length === 0) return [];
    return this.#search
      .search(query, { fields, boost, fuzzy: this.#options.fuzzy, prefix: this.#options.prefix, combineWith: 'OR' })
      .slice(0, k)
      .map((hit) => ({ id: String(hit.id), score: hit.score }));
  }
}

function toDocument(episode: Episode): Record<string, string> {
  const text = (role: 'user' | 'assistant') =>
    episode.transcript
      .filter((line) => line.role === role)
      .map((line) => line.content)
      .join('\n');
  return { id: episode.id, user: text('user'), assistant: text('assistant'), summary: episode.summary, keywords: episode.keywords.join(' ') };
}
