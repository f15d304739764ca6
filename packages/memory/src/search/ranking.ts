import type { LexicalHit } from './lexicalIndex.js';

/** How documents are ranked: BM25+ over their text (offline), by embeddings (cosine), or both fused. */
export type SearchMode = 'lexical' | 'embedding' | 'hybrid';

/**
 * A ranked document id. `score` orders results: BM25+ (lexical), cosine (embedding) or reciprocal-rank
 * fusion (hybrid).
 */
export interface RankedHit {
  id: string;
  /** The ranking score (see above); higher is better. */
  score: number;
  /** BM25+ score, when the document matched lexically. */
  lexicalScore?: number;
  /** Cosine similarity to the query, when embeddings were used. */
  similarity?: number;
}

/** Reciprocal-rank fusion constant (Cormack, Clarke & Büttcher 2009). */
const RRF_K = 60;
/** How many of each ranking take part in fusion. */
const FUSION_DEPTH = 50;

/**
 * Cosine similarity of two vectors: 1 same direction, 0 unrelated, -1 opposite.
 * @param a a vector
 * @param b a vector of the same length
 * @returns 0 when either vector is all zeros or their lengths differ
 * @example
 * ```ts
 * cosineSimilarity([1, 0], [1, 1]); // 0.707…
 * ```
 */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

/**
 * Lexical hits that reach `minScore`, as ranked hits (best first, as given).
 * @param hits a `LexicalIndex`'s hits
 * @param minScore lowest BM25+ score kept
 * @example
 * ```ts
 * lexicalRanking([{ id: 'a', score: 4.2 }, { id: 'b', score: 0.4 }], 1);
 * // [{ id: 'a', score: 4.2, lexicalScore: 4.2 }]
 * ```
 */
export function lexicalRanking(hits: readonly LexicalHit[], minScore: number): RankedHit[] {
  return hits
    .filter((hit) => hit.score >= minScore)
    .map((hit) => ({ id: hit.id, score: hit.score, lexicalScore: hit.score }));
}

/**
 * Documents ranked by cosine similarity of their vectors to the query's, those below `minSimilarity` left out.
 * @param query the query's vector
 * @param vectors `[id, vector]` pairs
 * @param minSimilarity lowest cosine similarity kept
 * @returns best first
 * @example
 * ```ts
 * embeddingRanking([1, 0], [['a', [0, 1]], ['b', [1, 1]]], 0.3);
 * // [{ id: 'b', score: 0.707…, similarity: 0.707… }]
 * ```
 */
export function embeddingRanking(
  query: readonly number[],
  vectors: Iterable<readonly [string, readonly number[]]>,
  minSimilarity: number,
): RankedHit[] {
  const out: RankedHit[] = [];
  for (const [id, vector] of vectors) {
    const similarity = cosineSimilarity(query, vector);
    if (similarity >= minSimilarity) out.push({ id, score: similarity, similarity });
  }
  return out.sort((a, b) => b.score - a.score);
}

/**
 * The `k` best of a search in `mode`: the lexical ranking, the embedding ranking, or (`'hybrid'`)
 * both fused by reciprocal rank (score = Σ 1/(60 + rank) over the top 50 of each), so a document
 * passes when it passes either threshold.
 *
 * @param mode which ranking(s) to use
 * @param lexical the lexical ranking, best first (ignored in mode `'embedding'`)
 * @param semantic the embedding ranking, best first (ignored in mode `'lexical'`)
 * @param k the most hits to return
 * @example
 * ```ts
 * const lexical = [{ id: 'a', score: 3, lexicalScore: 3 }];
 * const semantic = [{ id: 'b', score: 0.8, similarity: 0.8 }];
 * rankHits('hybrid', lexical, semantic, 2); // a and b, each scored 1/61
 * ```
 */
export function rankHits(
  mode: SearchMode,
  lexical: readonly RankedHit[],
  semantic: readonly RankedHit[],
  k: number,
): RankedHit[] {
  if (mode === 'lexical') return lexical.slice(0, k);
  if (mode === 'embedding') return semantic.slice(0, k);
  const fused = new Map<string, RankedHit>();
  const add = (list: readonly RankedHit[]) =>
    list.slice(0, FUSION_DEPTH).forEach((hit, rank) => {
      const entry = fused.get(hit.id) ?? { id: hit.id, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      if (hit.lexicalScore !== undefined) entry.lexicalScore = hit.lexicalScore;
      if (hit.similarity !== undefined) entry.similarity = hit.similarity;
      fused.set(hit.id, entry);
    });
  add(lexical);
  add(semantic);
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, k);
}
