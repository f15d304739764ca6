import { ConfigurationError, type Embedder, type Episode, InvalidInputError, type Store } from '@baton/core';
import { embeddingRanking, lexicalRanking, type RankedHit, rankHits, type SearchMode } from '../search/ranking.js';
import { episodeEmbeddingText, hasUsableEmbedding } from './episodeEmbedding.js';
import { EpisodeIndex, type LexicalRecallOptions } from './episodeIndex.js';

/** How episodes are ranked: BM25+ over their text (offline), embeddings (cosine), or both fused. */
export type RecallMode = SearchMode;

/** Recall settings of an `EpisodicMemory`. */
export interface RecallSettings {
  /** How many episodes to recall (default 3). */
  k?: number;
  /** Default `'hybrid'` when an embedder is configured, else `'lexical'`. */
  mode?: RecallMode;
  /** Lowest BM25+ score a lexical match needs (default 0: any matching term). */
  minScore?: number;
  /** Lowest cosine similarity an embedding match needs (default 0.3). */
  minSimilarity?: number;
  /** How many of the user's newest episodes are searched (default 1 000). */
  maxEpisodes?: number;
  /** Fields, boosts, fuzzy and prefix matching of lexical recall. */
  lexical?: LexicalRecallOptions;
}

/** What {@link EpisodeRecall.recall} searches: one user's episodes (in one tenant). */
export interface RecallQuery {
  /** The tenant; omitted, only episodes without a tenant are searched. */
  tenantId?: string;
  /** Whose episodes are searched (required: recall never crosses users). */
  userId: string;
  /** Free text, e.g. the user's new message. */
  query: string;
  /** Overrides the configured `k`. */
  k?: number;
  /** Overrides the configured mode. */
  mode?: RecallMode;
  /** Episode ids to leave out (e.g. the current session's). */
  excludeIds?: readonly string[];
  /** Cancels the embedder's calls (embedding and hybrid modes). */
  signal?: AbortSignal;
}

/** A recalled episode with its scores. `score` orders results: BM25+ (lexical), cosine (embedding) or reciprocal-rank fusion (hybrid). */
export interface RecalledEpisode {
  /** The episode as stored. */
  episode: Episode;
  /** The ranking score (see above); higher is better. */
  score: number;
  /** BM25+ score, when the episode matched lexically. */
  lexicalScore?: number;
  /** Cosine similarity to the query, when embeddings were used. */
  similarity?: number;
}

interface UserIndex {
  signature: string;
  episodes: Map<string, Episode>;
  lexical?: EpisodeIndex;
  vectors: Map<string, number[]>;
}

const CACHE_SIZE = 100;

/**
 * Ranks a user's episodes against a query. Each recall reads the user's episodes from the store
 * (so episodes saved by other processes are seen at once); the index built over them is cached per
 * tenant and user and rebuilt only when the set of episode ids changes. Hybrid ranking is
 * reciprocal-rank fusion of the lexical and the embedding ranking (score = Σ 1/(60 + rank)); an
 * episode passes when it passes either threshold. `EpisodicMemory` uses one; use it directly to rank
 * episodes without a context provider.
 *
 * @example
 * ```ts
 * import { EpisodeRecall } from '@baton/memory';
 * const recall = new EpisodeRecall({ k: 5, minScore: 1 });
 * const hits = await recall.recall(store, { userId: 'u-42', query: 'refund for order 1234' });
 * hits[0]?.episode.id; // the best match, e.g. 'chat-81'; each hit has `score` (and `lexicalScore` / `similarity`)
 * ```
 */
export class EpisodeRecall {
  readonly #settings: RecallSettings;
  readonly #embedder: Embedder | undefined;
  readonly #cache = new Map<string, UserIndex>();

  /**
   * @param settings `{ k?, mode?, minScore?, minSimilarity?, maxEpisodes?, lexical? }` ({@link RecallSettings})
   * @param embedder needed for modes `'embedding'` and `'hybrid'` (the default mode when given)
   */
  constructor(settings: RecallSettings = {}, embedder?: Embedder) {
    this.#settings = settings;
    this.#embedder = embedder;
  }

  /** The mode used when a query names none. */
  get defaultMode(): RecallMode {
    return this.#settings.mode ?? (this.#embedder === undefined ? 'lexical' : 'hybrid');
  }

  /**
   * Ranks the user's episodes against `query.query`.
   * @param store where the user's episodes are read (`findEpisodes`, newest `maxEpisodes`)
   * @param query `{ tenantId?, userId, query, k?, mode?, excludeIds?, signal? }`
   * @returns at most `k` episodes, best first, each passing its mode's threshold
   * @throws {InvalidInputError} for a missing user id, a non-string query or a bad `k`
   * @throws {ConfigurationError} when mode `'embedding'` or `'hybrid'` is asked for without an embedder
   * @throws the embedder's errors (Baton errors) in those modes
   */
  async recall(store: Store, query: RecallQuery): Promise<RecalledEpisode[]> {
    const k = query.k ?? this.#settings.k ?? 3;
    const mode = query.mode ?? this.defaultMode;
    validate(query, k);
    if (mode !== 'lexical' && this.#embedder === undefined) {
      throw new ConfigurationError(
        `Recall mode ${JSON.stringify(mode)} needs an embedder: pass { embedder } to EpisodicMemory, or use mode 'lexical'.`,
      );
    }
    const user = await this.#userIndex(store, query);
    const excluded = new Set(query.excludeIds ?? []);
    const lexical = mode === 'embedding' ? [] : this.#lexical(user, query.query, excluded);
    const semantic = mode === 'lexical' ? [] : await this.#semantic(user, query, excluded);
    return rankHits(mode, lexical, semantic, k).map((hit) => toRecalled(user, hit));
  }

  #lexical(user: UserIndex, text: string, excluded: ReadonlySet<string>): RankedHit[] {
    user.lexical ??= new EpisodeIndex([...user.episodes.values()], this.#settings.lexical);
    const ranked = lexicalRanking(user.lexical.search(text, user.episodes.size), this.#settings.minScore ?? 0);
    return ranked.filter((hit) => !excluded.has(hit.id));
  }

  async #semantic(user: UserIndex, query: RecallQuery, excluded: ReadonlySet<string>): Promise<RankedHit[]> {
    const embedder = this.#embedder!;
    if (query.query.trim() === '') return [];
    const options = query.signal === undefined ? {} : { signal: query.signal };
    const missing = [...user.episodes.values()].filter((e) => !user.vectors.has(e.id) && !excluded.has(e.id));
    const toEmbed = missing.filter((e) => !hasUsableEmbedding(e, embedder) && episodeEmbeddingText(e) !== '');
    for (const e of missing) if (hasUsableEmbedding(e, embedder)) user.vectors.set(e.id, e.embedding);
    if (toEmbed.length > 0) {
      const vectors = await embedder.embed(toEmbed.map(episodeEmbeddingText), options);
      toEmbed.forEach((e, i) => {
        user.vectors.set(e.id, vectors[i]!);
      });
    }
    const [queryVector] = await embedder.embed([query.query], options);
    const candidates = [...user.vectors].filter(([id]) => !excluded.has(id));
    return embeddingRanking(queryVector!, candidates, this.#settings.minSimilarity ?? 0.3);
  }

  async #userIndex(store: Store, query: RecallQuery): Promise<UserIndex> {
    const filter =
      query.tenantId === undefined ? { userId: query.userId } : { tenantId: query.tenantId, userId: query.userId };
    const found = await store.findEpisodes({ ...filter, limit: this.#settings.maxEpisodes ?? 1000 });
    // Defence in depth: whatever the store returns, only this tenant's and user's episodes are used.
    const episodes = found.filter((e) => e.userId === query.userId && e.tenantId === query.tenantId);
    const key = JSON.stringify([query.tenantId ?? null, query.userId]);
    const signature = episodes.map((e) => e.id).join('\n');
    const cached = this.#cache.get(key);
    this.#cache.delete(key);
    const user =
      cached?.signature === signature
        ? cached
        : { signature, episodes: new Map(episodes.map((e) => [e.id, e])), vectors: new Map() };
    this.#cache.set(key, user);
    if (this.#cache.size > CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
    return user;
  }
}

function validate(query: RecallQuery, k: number): void {
  if (typeof query.userId !== 'string' || query.userId === '') {
    throw new InvalidInputError(
      `Recall needs the user's id, got ${JSON.stringify(query.userId)}: episodes are only ever recalled for one user.`,
    );
  }
  if (typeof query.query !== 'string')
    throw new InvalidInputError(`Recall query must be a string, got ${JSON.stringify(query.query)}.`);
  if (!Number.isInteger(k) || k <= 0)
    throw new InvalidInputError(`Recall k must be a positive integer, got ${JSON.stringify(k)}.`);
}

function toRecalled(user: UserIndex, hit: RankedHit): RecalledEpisode {
  const recalled: RecalledEpisode = { episode: user.episodes.get(hit.id)!, score: hit.score };
  if (hit.lexicalScore !== undefined) recalled.lexicalScore = hit.lexicalScore;
  if (hit.similarity !== undefined) recalled.similarity = hit.similarity;
  return recalled;
}
