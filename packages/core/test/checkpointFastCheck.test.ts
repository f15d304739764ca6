import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  CheckpointCorruptError,
  CheckpointSchema,
  InMemoryStore,
  parseCheckpoint,
} from '../src/index.js';
import { fastCheckpointCopy } from '../src/store/checkpointFastCheck.js';
import { cloneData } from '../src/store/cloneData.js';

const turnEnd: Checkpoint = {
  schemaVersion: CHECKPOINT_SCHEMA_VERSION,
  id: 'cp-1',
  parentId: null,
  sessionId: 's-1',
  branchId: 'main',
  step: 3,
  createdAt: '2026-01-01T00:00:00.000Z',
  throughSeq: 12,
  machine: {
    status: 'active',
    value: 'idle',
    context: { coordinator: 'triage', activeAgent: 'triage', previousAgent: 'billing', turn: 3, handoffsThisTurn: 0 },
  },
  pendingRequests: [],
  pendingWrites: [],
  statePatches: {
    session: [{ op: 'replace', path: ['verified'], value: { by: 'agent' } }],
    branch: [{ op: 'remove', path: ['plan', 0] }],
  },
};

/** Values to try in each field: valid ones, edge cases and wrong types. */
const samples: unknown[] = [
  undefined,
  null,
  '',
  'x',
  0,
  -1,
  1.5,
  2 ** 53,
  Number.NaN,
  true,
  '2026-01-01T00:00:00.000Z',
  '2026-02-30T00:00:00Z',
  '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
  '00-XYZ',
  [],
  [{ op: 'add', path: ['a'], value: 1 }],
  [{ op: 'move', path: ['a'] }],
  [{ op: 'add', path: [Number.NaN] }],
  [{ op: 'add', path: 'a' }],
  [null],
  {},
  { session: [], branch: [] },
  { session: [], branch: null },
  [
    {
      type: 'user_input',
      id: 'r',
      agent: 'a',
      toolCallId: 't',
      prompt: 'p',
      conversationRef: { branchId: 'main', throughSeq: 1 },
      createdAt: '2026-01-01T00:00:00.000Z',
    },
  ],
  new Date(0),
  new Map(),
];

describe('fastCheckpointCopy', () => {
  it('gives what zod gives for a turn-end checkpoint (same values, same key order), sharing no object', () => {
    for (const checkpoint of [
      turnEnd,
      {
        ...turnEnd,
        traceparent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
        extra: 'dropped as zod drops it',
      },
    ]) {
      const copy = fastCheckpointCopy(checkpoint);
      expect(copy).toBeDefined();
      expect(JSON.stringify(copy)).toBe(JSON.stringify(parseCheckpoint(checkpoint)));
      expect(copy!.machine).not.toBe(checkpoint.machine);
      expect(copy!.statePatches.session[0]!.value).not.toBe(checkpoint.statePatches.session[0]!.value);
      expect(copy!.statePatches.branch[0]!.path).not.toBe(checkpoint.statePatches.branch[0]!.path);
    }
  });

  it('never accepts a checkpoint CheckpointSchema rejects, whatever one field holds; when it accepts, it equals zod', () => {
    let accepted = 0;
    for (const field of Object.keys(CheckpointSchema.shape)) {
      for (const sample of samples) {
        const checkpoint: Record<string, unknown> = { ...turnEnd, [field]: sample };
        if (sample === undefined) delete checkpoint[field];
        const copy = fastCheckpointCopy(checkpoint);
        if (copy === undefined) continue;
        accepted += 1;
        const parsed = CheckpointSchema.safeParse(checkpoint);
        expect(parsed.success, `${field} = ${String(sample)}`).toBe(true);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed.data));
      }
    }
    expect(accepted).toBeGreaterThan(20);
  });

  it('leaves checkpoints with pending requests or writes to zod, and the error message too', async () => {
    expect(fastCheckpointCopy({ ...turnEnd, pendingWrites: [{ toolCallId: 't' }] })).toBeUndefined();
    const store = new InMemoryStore();
    await store.createSession({ id: 's-1' });
    await expect(store.saveCheckpoint({ ...turnEnd, throughSeq: -1 })).rejects.toThrow(CheckpointCorruptError);
    await expect(store.saveCheckpoint({ ...turnEnd, throughSeq: -1 })).rejects.toThrow(/throughSeq/);
    const saved = cloneData(turnEnd);
    await store.saveCheckpoint(saved);
    (saved.machine as { value: string }).value = 'changed by the caller';
    expect(await store.loadCheckpoint('s-1', 'main')).toEqual(parseCheckpoint(turnEnd));
  });
});
