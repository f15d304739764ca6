/**
 * Builders for the store conformance suite: unique ids (so a suite can share one database with
 * other runs), valid messages, checkpoints, pending writes and episodes.
 */
import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  createId,
  type Episode,
  type Message,
  type PendingWrite,
} from '@baton/core';

/** A session (or tenant, user) id no other test uses: `<prefix>-<UUIDv7>`. */
export function uniqueId(prefix = 's'): string {
  return `${prefix}-${createId()}`;
}

/** An ISO-8601 timestamp `ms` milliseconds from now (negative: in the past). */
export function isoFromNow(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

/**
 * A valid message at `seq`: a user message on odd seqs and an assistant message on even ones,
 * with a fresh id.
 */
export function makeMessage(seq: number, overrides: Partial<Message> = {}): Message {
  const assistant = seq % 2 === 0;
  const message: Message = {
    id: createId(),
    seq,
    role: assistant ? 'assistant' : 'user',
    content: `${assistant ? 'answer' : 'question'} number ${seq}`,
    createdAt: new Date(Date.UTC(2025, 0, 1, 12, 0, seq)).toISOString(),
  };
  if (assistant) message.agent = 'triage';
  return { ...message, ...overrides };
}

/** `count` messages with seqs `fromSeq, fromSeq + 1, …`. */
export function makeMessages(fromSeq: number, count: number, overrides: Partial<Message> = {}): Message[] {
  return Array.from({ length: count }, (_, index) => makeMessage(fromSeq + index, overrides));
}

/** What a checkpoint builder needs; everything else has a valid default. */
export interface CheckpointSpec {
  sessionId: string;
  branchId?: string;
  id?: string;
  parentId?: string | null;
  step?: number;
  throughSeq?: number;
  createdAt?: string;
  pendingWrites?: PendingWrite[];
}

/** A valid checkpoint of the current schema, with a small routing-machine snapshot and one state patch. */
export function makeCheckpoint(spec: CheckpointSpec): Checkpoint {
  const step = spec.step ?? 1;
  return {
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
    id: spec.id ?? createId(),
    parentId: spec.parentId ?? null,
    sessionId: spec.sessionId,
    branchId: spec.branchId ?? 'main',
    step,
    createdAt: spec.createdAt ?? new Date().toISOString(),
    throughSeq: spec.throughSeq ?? step * 2,
    machine: {
      status: 'active',
      value: 'running',
      context: { activeAgent: 'billing', turn: step, handoffsThisTurn: 1 },
    },
    pendingRequests: [],
    pendingWrites: spec.pendingWrites ?? [],
    statePatches: { session: [{ op: 'replace', path: ['verified'], value: true }], branch: [] },
  };
}

/**
 * A chain of `count` checkpoints of one branch, each the parent of the next, with increasing
 * step, throughSeq and createdAt (one second apart, ending `endAgoMs` before now).
 */
export function makeCheckpointChain(
  sessionId: string,
  count: number,
  options: { branchId?: string; endAgoMs?: number; spacingMs?: number } = {},
): Checkpoint[] {
  const spacing = options.spacingMs ?? 1000;
  const end = Date.now() - (options.endAgoMs ?? 0);
  const chain: Checkpoint[] = [];
  for (let index = 0; index < count; index += 1) {
    chain.push(
      makeCheckpoint({
        sessionId,
        branchId: options.branchId ?? 'main',
        step: index + 1,
        parentId: chain[index - 1]?.id ?? null,
        createdAt: new Date(end - (count - 1 - index) * spacing).toISOString(),
      }),
    );
  }
  return chain;
}

/** A finished tool result of an unfinished step. */
export function makePendingWrite(toolCallId: string, overrides: Partial<PendingWrite> = {}): PendingWrite {
  return {
    toolCallId,
    toolName: 'lookup_order',
    agent: 'billing',
    content: JSON.stringify({ order: '1234', status: 'charged twice' }),
    isError: false,
    durationMs: 12,
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

/** What an episode builder needs; everything else has a valid default. */
export interface EpisodeSpec {
  sessionId?: string;
  id?: string;
  tenantId?: string;
  userId?: string;
  endedAt?: string;
  summary?: string;
}

/** A valid episode of a closed session (its id defaults to the session id). */
export function makeEpisode(spec: EpisodeSpec = {}): Episode {
  const sessionId = spec.sessionId ?? uniqueId('ep');
  const endedAt = spec.endedAt ?? new Date().toISOString();
  const episode: Episode = {
    id: spec.id ?? sessionId,
    sessionId,
    startedAt: new Date(Date.parse(endedAt) - 60_000).toISOString(),
    endedAt,
    closedReason: 'resolved',
    agents: ['triage', 'billing'],
    transcript: [
      { role: 'user', content: 'I was charged twice for order 1234' },
      { role: 'assistant', agent: 'billing', content: 'I refunded the second charge.' },
    ],
    summary: spec.summary ?? 'Refunded a double charge on order 1234.',
    keywords: ['refund', 'double charge'],
  };
  if (spec.tenantId !== undefined) episode.tenantId = spec.tenantId;
  if (spec.userId !== undefined) episode.userId = spec.userId;
  return episode;
}

/** Ids that must be refused wherever a store takes an id: paths, a query operator, the empty string. */
export const BAD_IDS = ['../x', 'a/b', '$gt', ''] as const;
