import { z } from 'zod';
import { IsoTimestampSchema } from '../timestamp.js';

/**
 * What episodic memory keeps of a closed session (docs/architecture.md): who, when, why it closed, which
 * agents took part, a user/assistant transcript, a summary, keywords, optionally an embedding.
 * One episode per session: its `id` is conventionally the session id, so a repeated save is a no-op.
 */
export const EpisodeSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  tenantId: z.string().optional(),
  userId: z.string().optional(),
  startedAt: IsoTimestampSchema,
  endedAt: IsoTimestampSchema,
  closedReason: z.string(),
  agents: z.array(z.string()),
  transcript: z.array(
    z.object({ role: z.enum(['user', 'assistant']), agent: z.string().optional(), content: z.string() }),
  ),
  summary: z.string(),
  keywords: z.array(z.string()),
  embedding: z.array(z.number()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
/** `{ id, sessionId, tenantId?, userId?, startedAt, endedAt, closedReason, agents, transcript, summary, keywords, embedding?, metadata? }`. */
export type Episode = z.infer<typeof EpisodeSchema>;
