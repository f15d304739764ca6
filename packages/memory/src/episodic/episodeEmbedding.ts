import type { Embedder, Episode } from '@baton/core';
import { TokenCounter } from '../working/tokenCounter.js';

/** OpenAI's embedding models take at most 8 192 tokens per input; episodes are cut a little below that. */
const EMBEDDING_INPUT_TOKENS = 8000;
/** The `text-embedding-3-*` models count with `cl100k_base` (made on first use: its ranks take ~10 MB of heap). */
let embeddingCounter: TokenCounter | undefined;

/**
 * The text an episode is embedded from: its summary, keywords and user/assistant lines, cut to
 * 8 000 tokens (the start is kept).
 *
 * @param episode a stored or built episode
 * @returns `''` for an episode with no text (nothing to embed)
 */
export function episodeEmbeddingText(episode: Episode): string {
  const lines = [
    episode.summary,
    episode.keywords.join(', '),
    ...episode.transcript.map((line) => line.content),
  ].filter((l) => l.trim() !== '');
  embeddingCounter ??= new TokenCounter({ encoding: 'cl100k_base' });
  return embeddingCounter.truncate(lines.join('\n'), EMBEDDING_INPUT_TOKENS);
}

/**
 * Whether `episode.embedding` was made by `embedder`'s model (recorded in `metadata.embeddingModel`
 * at save time) and has its dimensions, so it can be compared with the embedder's query vectors.
 * @param episode a stored episode
 * @param embedder the embedder queries will be embedded with
 */
export function hasUsableEmbedding(episode: Episode, embedder: Embedder): episode is Episode & { embedding: number[] } {
  if (episode.embedding === undefined || episode.embedding.length === 0) return false;
  if (episode.metadata?.embeddingModel !== embedder.model) return false;
  return embedder.dimensions === undefined || episode.embedding.length === embedder.dimensions;
}
