import type { ModelMessage } from '@baton/core';
import type { RecalledEpisode } from './episodeRecall.js';

/** The first line of the context message {@link recalledContextMessage} builds. */
export const RECALLED_EPISODES_HEADING =
  'Earlier conversations with this user that may be relevant (most relevant first):';

/**
 * The one `context` message that carries recalled episodes into a turn: per episode its session id,
 * when it ran and ended, why it closed, the agents that took part, its summary and keywords.
 *
 * @param recalled episodes, best first
 * @returns `undefined` when there are none
 * @example
 * ```ts
 * recalledContextMessage(await memory.recall({ userId: 'u-42', query: 'what happened with my refund?' }))?.content;
 * // 'Earlier conversations with this user …\n\n1. Conversation chat-81 (2025-03-02, closed: resolved; agents: triage, billing)\nSummary: …'
 * ```
 */
export function recalledContextMessage(recalled: readonly RecalledEpisode[]): ModelMessage | undefined {
  if (recalled.length === 0) return undefined;
  const blocks = recalled.map(({ episode }, i) => {
    const day = episode.endedAt.slice(0, 10);
    const agents = episode.agents.length > 0 ? `; agents: ${episode.agents.join(', ')}` : '';
    const lines = [
      `${i + 1}. Conversation ${episode.sessionId} (${day}, closed: ${episode.closedReason}${agents})`,
      `Summary: ${episode.summary}`,
    ];
    if (episode.keywords.length > 0) lines.push(`Keywords: ${episode.keywords.join(', ')}`);
    return lines.join('\n');
  });
  return { role: 'context', content: `${RECALLED_EPISODES_HEADING}\n\n${blocks.join('\n\n')}` };
}
