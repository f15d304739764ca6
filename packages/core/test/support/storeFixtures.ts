import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  createId,
  type Message,
  type PendingWrite,
} from '../../src/index.js';

/** A valid message at `seq` with a fresh id. */
export function makeMessage(seq: number, overrides: Partial<Message> = {}): Message {
  return {
    id: createId(),
    seq,
    role: seq % 2 === 0 ? 'assistant' : 'user',
    content: `message number ${seq}`,
    createdAt: new Date(Date.UTC(2025, 0, 1, 12, 0, seq)).toISOString(),
    ...overrides,
  };
}

/** `count` messages from `fromSeq`. */
export function makeMessages(fromSeq: number, count: number): Message[] {
  return Array.from({ length: count }, (_, index) => makeMessage(fromSeq + index));
}

/** A valid checkpoint of `main` (or `branchId`). */
export function makeCheckpoint(sessionId: string, overrides: Partial<Checkpoint> = {}): Checkpoint {
  return {
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
    id: createId(),
    parentId: null,
    sessionId,
    branchId: 'main',
    step: 1,
    createdAt: new Date().toISOString(),
    throughSeq: 2,
    machine: { value: 'running', context: { activeAgent: 'billing' } },
    pendingRequests: [],
    pendingWrites: [],
    statePatches: { session: [], branch: [] },
    ...overrides,
  };
}

/** A finished tool result of an unfinished step. */
export function makePendingWrite(toolCallId: string): PendingWrite {
  return {
    toolCallId,
    toolName: 'lookup_order',
    agent: 'billing',
    content: '{"ok":true}',
    isError: false,
    durationMs: 5,
    createdAt: new Date().toISOString(),
  };
}
