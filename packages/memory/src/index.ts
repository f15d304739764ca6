/**
 * `@baton/memory`: working memory (each model input within a token budget), episodic memory (an
 * episode per closed session, recalled in later sessions of the same user), semantic memory (an
 * agent's knowledge, searched before each of its activations) and tool-call audit.
 * It plugs into a runtime through core's `ContextProvider` contract, never by import.
 *
 * @example
 * ```ts
 * import { EpisodicMemory, WorkingMemory } from '@baton/memory';
 * const episodic = new EpisodicMemory({ recall: { k: 3 } });
 * const working = new WorkingMemory({ maxTokens: 8000, model: 'gpt-4.1-mini' });
 * ```
 */

export { type ListToolCallsOptions, listToolCalls, type ToolCallRecord } from './audit/listToolCalls.js';
export { agentsOf, type BuildEpisodeOptions, buildEpisode, transcriptOf } from './episodic/buildEpisode.js';
export { episodeEmbeddingText, hasUsableEmbedding } from './episodic/episodeEmbedding.js';
export {
  DEFAULT_FIELD_BOOSTS,
  type EpisodeField,
  EpisodeIndex,
  type LexicalRecallOptions,
} from './episodic/episodeIndex.js';
export {
  EpisodeRecall,
  type RecalledEpisode,
  type RecallMode,
  type RecallQuery,
  type RecallSettings,
} from './episodic/episodeRecall.js';
export { EpisodicMemory, type EpisodicMemoryOptions, type EpisodicMemoryStage } from './episodic/episodicMemory.js';
export { type ExtractiveSummaryOptions, extractiveSummary } from './episodic/extractiveSummary.js';
export { RECALLED_EPISODES_HEADING, recalledContextMessage } from './episodic/recalledContext.js';
export { type LexicalHit, LexicalIndex, type LexicalMatchOptions } from './search/lexicalIndex.js';
export {
  cosineSimilarity,
  embeddingRanking,
  lexicalRanking,
  type RankedHit,
  rankHits,
  type SearchMode,
} from './search/ranking.js';
export { normalizeTerm, STOP_WORDS, sentences, textTerms, textWords, topTerms } from './search/textTerms.js';
export { KNOWLEDGE_HEADING, knowledgeContextMessage } from './semantic/knowledgeContext.js';
export type { KnowledgeDocument } from './semantic/knowledgeDocument.js';
export {
  type KnowledgeField,
  type KnowledgeHit,
  type KnowledgeQuery,
  SemanticMemory,
  type SemanticMemoryOptions,
} from './semantic/semanticMemory.js';
export {
  type CloseIdleSessionsOptions,
  type CloseIdleSessionsResult,
  closeIdleSessions,
  type IdleSweepOptions,
  startIdleSweep,
} from './session/closeIdleSessions.js';
export { endConversationTool } from './session/endConversationTool.js';
export { HistorySummarizer, type SummaryCache } from './working/historySummarizer.js';
export { groupMessages, type MessageGroup } from './working/messageGroups.js';
export { CONTEXT_LABEL_TOKENS, encodingForModel, TokenCounter, type TokenEncoding } from './working/tokenCounter.js';
export { type TrimStrategy, WorkingMemory, type WorkingMemoryOptions } from './working/workingMemory.js';
