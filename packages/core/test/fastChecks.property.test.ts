import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BranchSchema,
  CHECKPOINT_SCHEMA_VERSION,
  CheckpointSchema,
  MessageRoleSchema,
  MessageSchema,
  SessionSchema,
} from '../src/index.js';
import { fastCheckpointCopy } from '../src/store/checkpointFastCheck.js';
import { fastAcceptsMessage } from '../src/store/messageFastCheck.js';
import { fastAcceptsNewSession, fastStoredBranch, fastStoredSession } from '../src/store/sessionFastCheck.js';

/**
 * The three checks that skip zod on a store's hot path (messages, sessions and branches,
 * turn-end checkpoints) against the zod schemas they shadow, on generated documents: valid ones,
 * and valid ones with one field (of the schema's own key list, or an unknown key) set to anything.
 * Whatever a check accepts, zod accepts, and what it returns is what zod returns.
 */

const iso = fc
  .date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2100-01-01T00:00:00.000Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const json = fc.jsonValue({ maxDepth: 3 });
const record = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 4, noNullPrototype: true });

/** What a field may be set to: anything fast-check makes, and near misses of the schemas' rules. */
const anyValue = fc.oneof(
  {
    arbitrary: fc.anything({
      maxDepth: 2,
      withBigInt: true,
      withDate: true,
      withMap: true,
      withNullPrototype: true,
      withSparseArray: true,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom(undefined, null, '', 'active', 'closed', '2026-02-30T00:00:00Z', '00-XYZ', true, [], {}),
    weight: 3,
  },
  { arbitrary: fc.constantFrom(0, -0, -1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY), weight: 3 },
  { arbitrary: iso, weight: 1 },
  { arbitrary: record, weight: 1 },
  { arbitrary: fc.array(record, { maxLength: 2 }), weight: 1 },
);

/** `base` with one field (a schema key or an unknown one) set to a generated value, or removed. */
function mutated(base: fc.Arbitrary<object>, keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const field = fc.constantFrom(...keys, 'unknownKey');
  return fc.tuple(base, field, anyValue, fc.boolean()).map(([doc, key, value, remove]) => {
    const copy: Record<string, unknown> = { ...(doc as Record<string, unknown>) };
    if (remove) delete copy[key];
    else copy[key] = value;
    return copy;
  });
}

const name = fc.string({ minLength: 1 });
const toolCall = fc.record({ id: name, name, arguments: fc.string() });
const message = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    seq: fc.integer({ min: 1 }),
    role: fc.constantFrom(...MessageRoleSchema.options),
    content: fc.string(),
    agent: fc.string(),
    toolCalls: fc.array(toolCall, { maxLength: 2 }),
    toolCallId: fc.string(),
    toolName: fc.string(),
    isError: fc.boolean(),
    durationMs: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
    createdAt: iso,
    metadata: record,
  },
  { requiredKeys: ['id', 'seq', 'role', 'content', 'createdAt'] },
);

const session = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    tenantId: fc.string({ minLength: 1 }),
    userId: fc.string({ minLength: 1 }),
    status: fc.constantFrom('active' as const, 'closed' as const),
    createdAt: iso,
    lastActivityAt: iso,
    closedAt: iso,
    closedReason: fc.string(),
    metadata: record,
    state: record,
    version: fc.integer({ min: 1 }),
  },
  { requiredKeys: ['id', 'status', 'createdAt', 'lastActivityAt', 'metadata', 'state', 'version'] },
);

const branch = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    sessionId: fc.string({ minLength: 1 }),
    parent: fc.record({ branchId: fc.string({ minLength: 1 }), atSeq: fc.integer({ min: 0 }) }),
    createdAt: iso,
    state: record,
    version: fc.integer({ min: 1 }),
  },
  { requiredKeys: ['id', 'sessionId', 'createdAt', 'state', 'version'] },
);

const patch = fc.record(
  {
    op: fc.constantFrom('add' as const, 'remove' as const, 'replace' as const),
    path: fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
    value: json,
  },
  { requiredKeys: ['op', 'path'] },
);
const turnEndCheckpoint = fc.record(
  {
    schemaVersion: fc.constant(CHECKPOINT_SCHEMA_VERSION),
    id: fc.string({ minLength: 1 }),
    parentId: fc.option(fc.string({ minLength: 1 }), { nil: null }),
    sessionId: fc.string({ minLength: 1 }),
    branchId: fc.string({ minLength: 1 }),
    step: fc.nat(),
    createdAt: iso,
    throughSeq: fc.nat(),
    machine: json,
    pendingRequests: fc.constant([]),
    pendingWrites: fc.constant([]),
    statePatches: fc.record({ session: fc.array(patch, { maxLength: 2 }), branch: fc.array(patch, { maxLength: 2 }) }),
    traceparent: fc.constant('00-0123456789abcdef0123456789abcdef-0123456789abcdef-01'),
  },
  {
    requiredKeys: [
      'schemaVersion',
      'id',
      'parentId',
      'sessionId',
      'branchId',
      'step',
      'createdAt',
      'throughSeq',
    ].concat(['machine', 'pendingRequests', 'pendingWrites', 'statePatches']) as never,
  },
);

const RUNS = { numRuns: 400 };

describe('the hot-path checks agree with the zod schemas they shadow', () => {
  it('fastAcceptsMessage: accepts the valid messages, and only what MessageSchema accepts', () => {
    fc.assert(
      fc.property(message, (m) => fastAcceptsMessage(m) && MessageSchema.safeParse(m).success),
      RUNS,
    );
    fc.assert(
      fc.property(mutated(message, Object.keys(MessageSchema.shape)), (m) => {
        if (fastAcceptsMessage(m)) expect(MessageSchema.safeParse(m).success).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('fastStoredSession and fastAcceptsNewSession: only what SessionSchema accepts, returning what it returns', () => {
    fc.assert(
      fc.property(session, (s) => fastStoredSession(s) !== undefined),
      RUNS,
    );
    fc.assert(
      fc.property(mutated(session, Object.keys(SessionSchema.shape)), (s) => {
        const fast = fastStoredSession(s);
        const parsed = SessionSchema.safeParse(s);
        if (fast !== undefined) expect(parsed.success && fast).toStrictEqual(parsed.data);
        if (fastAcceptsNewSession(s as never)) expect(parsed.success).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('fastStoredBranch: only what BranchSchema accepts, returning what it returns', () => {
    fc.assert(
      fc.property(branch, (b) => fastStoredBranch(b) !== undefined),
      RUNS,
    );
    fc.assert(
      fc.property(mutated(branch, Object.keys(BranchSchema.shape)), (b) => {
        const fast = fastStoredBranch(b);
        const parsed = BranchSchema.safeParse(b);
        if (fast !== undefined) expect(parsed.success && fast).toStrictEqual(parsed.data);
      }),
      { numRuns: 1000 },
    );
  });

  it('fastCheckpointCopy: only what CheckpointSchema accepts, returning what it returns', () => {
    fc.assert(
      fc.property(turnEndCheckpoint, (c) => fastCheckpointCopy(c) !== undefined),
      RUNS,
    );
    fc.assert(
      fc.property(mutated(turnEndCheckpoint, Object.keys(CheckpointSchema.shape)), (c) => {
        const fast = fastCheckpointCopy(c);
        const parsed = CheckpointSchema.safeParse(c);
        if (fast !== undefined) expect(parsed.success && fast).toEqual(parsed.data);
      }),
      { numRuns: 1000 },
    );
  });
});
