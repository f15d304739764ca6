import { collectModelResponse, type Episode, type Message, type ModelClient, type SessionCloseArgs } from '@baton/core';
import { topTerms } from '../search/textTerms.js';
import { TokenCounter } from '../working/tokenCounter.js';
import { extractiveSummary } from './extractiveSummary.js';

/** Options of {@link buildEpisode}. */
export interface BuildEpisodeOptions {
  /** Writes the summary; without it the summary is extractive ({@link extractiveSummary}). */
  summarizer?: ModelClient;
  /** How many keywords to keep (default 12). */
  keywords?: number;
  /** Called when the summariser fails; the episode then gets the extractive summary. */
  onError?: (error: unknown) => void;
}

const INSTRUCTIONS =
  'You write the memory a support desk keeps of a finished conversation. In at most 80 words, state what the user wanted, ' +
  'the facts they gave (names, ids, order numbers, amounts), what was done and how it ended. Plain sentences, no preamble, nothing invented.';

/** The transcript sent to a summariser is cut to this many tokens (the start is kept). */
const SUMMARIZER_INPUT_TOKENS = 12_000;

/**
 * The transcript of a session: its user and assistant text, in order. Tool calls, tool results,
 * system and context messages and empty assistant texts (messages that only called tools) are left out.
 *
 * @param messages stored messages, oldest first
 * @returns `{ role: 'user' | 'assistant', agent?, content }` lines (`agent` on assistant lines that have one)
 */
export function transcriptOf(messages: readonly Message[]): Episode['transcript'] {
  const out: Episode['transcript'] = [];
  for (const m of messages) {
    if ((m.role !== 'user' && m.role !== 'assistant') || m.content.trim() === '') continue;
    out.push(
      m.role === 'assistant' && m.agent !== undefined
        ? { role: m.role, agent: m.agent, content: m.content }
        : { role: m.role, content: m.content },
    );
  }
  return out;
}

/**
 * The agents whose assistant messages appear in `messages`, in order of first appearance.
 * @param messages stored messages, oldest first
 * @returns agent names, each once
 */
export function agentsOf(messages: readonly Message[]): string[] {
  const agents: string[] = [];
  for (const m of messages)
    if (m.role === 'assistant' && m.agent !== undefined && !agents.includes(m.agent)) agents.push(m.agent);
  return agents;
}

/**
 * Builds the {@link Episode} of a closed session: `id` = the session id (so saving it twice is a
 * no-op), who (tenant, user), when (`startedAt` = the session's creation, `endedAt` = its `closedAt`,
 * else its last message, else now), why (`closedReason`), the agents that took part, the
 * user/assistant transcript, a summary (by `summarizer` when given, else extractive) and keywords
 * (the transcript's most frequent terms, stop words left out). `metadata.summarizedBy` says which
 * summary it got (`'extractive'` or the model's name).
 *
 * @param args what a runtime passes to `onSessionClose`: `{ session, reason, messages, agents }`
 * @param options `{ summarizer?, keywords?, onError? }` (default: extractive summary, 12 keywords)
 * @returns the episode, not yet saved, without an embedding
 * @throws nothing of its own: a failed summariser is reported to `onError` and the extractive summary used
 * @example
 * ```ts
 * import { buildEpisode } from '@baton/memory';
 * const episode = await buildEpisode({ session, reason: 'resolved', messages, agents: ['triage', 'billing'], store });
 * await store.saveEpisode(episode);
 * ```
 */
export async function buildEpisode(
  args: Omit<SessionCloseArgs, 'store'>,
  options: BuildEpisodeOptions = {},
): Promise<Episode> {
  const { session, messages } = args;
  const transcript = transcriptOf(messages);
  let summary = extractiveSummary(transcript);
  let summarizedBy = 'extractive';
  if (options.summarizer !== undefined && transcript.length > 0) {
    try {
      const text = (await summarize(options.summarizer, transcript)).trim();
      if (text !== '') {
        summary = text;
        summarizedBy = options.summarizer.model;
      }
    } catch (error) {
      options.onError?.(error);
    }
  }
  const episode: Episode = {
    id: session.id,
    sessionId: session.id,
    startedAt: session.createdAt,
    endedAt: session.closedAt ?? messages.at(-1)?.createdAt ?? new Date().toISOString(),
    closedReason: args.reason,
    agents: args.agents.length > 0 ? [...args.agents] : agentsOf(messages),
    transcript,
    summary,
    keywords: topTerms(
      transcript.map((line) => line.content),
      options.keywords ?? 12,
    ),
    metadata: { summarizedBy, messageCount: messages.length },
  };
  if (session.tenantId !== undefined) episode.tenantId = session.tenantId;
  if (session.userId !== undefined) episode.userId = session.userId;
  return episode;
}

async function summarize(model: ModelClient, transcript: Episode['transcript']): Promise<string> {
  const text = transcript
    .map((line) => `${line.role === 'user' ? 'User' : (line.agent ?? 'Assistant')}: ${line.content}`)
    .join('\n');
  const counter = new TokenCounter({ model: model.model });
  const response = await collectModelResponse(
    model.stream({
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: counter.truncate(text, SUMMARIZER_INPUT_TOKENS) },
      ],
      tools: [],
      agent: 'episodic-memory',
    }),
  );
  return response.text;
}
