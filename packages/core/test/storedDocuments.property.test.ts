/**
 * Round trips of every persisted document: arbitrary valid sessions, branches, messages,
 * checkpoints (with requests, pending writes and state patches), pending writes and episodes,
 * built by hand from their zod schemas, serialise to JSON and parse back (parseStored*) to the same
 * document; the write-side checks accept them; and one field set to what a write refuses (a non-ISO
 * timestamp, an id that fails the id rule) is refused on read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Branch,
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  CheckpointCorruptError,
  DocumentCorruptError,
  type Episode,
  isValidId,
  type Message,
  MessageSchema,
  type PendingWrite,
  type Request,
  type Session,
} from '../src/index.js';
import {
  assertCheckpoint,
  assertEpisode,
  assertMessages,
  parseStoredBranch,
  parseStoredCheckpoint,
  parseStoredEpisode,
  parseStoredMessage,
  parseStoredPendingWrite,
  parseStoredSession,
} from '../src/store-kit/index.js';
import { fastAcceptsMessage } from '../src/store/messageFastCheck.js';

const id = fc.stringMatching(/^[A-Za-z0-9_:][A-Za-z0-9_:.-]{0,24}$/).filter(isValidId);
const timestamp = fc
  .date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const text = fc.string({ maxLength: 40 });
const safeKey = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_ -]{0,12}$/)
  .filter((key) => !['__proto__', 'constructor', 'prototype'].includes(key));
/** JSON whose keys any store accepts (no `$`, `.`, NUL). */
const safeJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    text,
    fc.array(tie('value'), { maxLength: 3 }),
    tie('object'),
  ),
  object: fc.dictionary(safeKey, tie('value'), { maxKeys: 4 }),
})).value;
const record = fc.dictionary(safeKey, safeJson, { maxKeys: 4 }) as fc.Arbitrary<Record<string, unknown>>;
const whole = fc.nat({ max: 1_000_000 });

/** `fc.record` with optional keys really absent (never `undefined`), as stored documents have them. */
const optional = { requiredKeys: [] as never[] };

const sessionArbitrary: fc.Arbitrary<Session> = fc
  .tuple(
    fc.record({
      id,
      status: fc.constantFrom('active' as const, 'closed' as const),
      createdAt: timestamp,
      lastActivityAt: timestamp,
      metadata: record,
      state: record,
      version: fc.integer({ min: 1, max: 1e9 }),
    }),
    fc.record({ tenantId: id, userId: id, closedAt: timestamp, closedReason: text }, optional),
  )
  .map(([required, extra]) => ({ ...required, ...extra }));

const branchArbitrary: fc.Arbitrary<Branch> = fc
  .tuple(
    fc.record({ id, sessionId: id, createdAt: timestamp, state: record, version: fc.integer({ min: 1, max: 1e9 }) }),
    fc.record({ parent: fc.record({ branchId: id, atSeq: whole }) }, optional),
  )
  .map(([required, extra]) => ({ ...required, ...extra }));

const toolCall = fc.record({
  id: fc.string({ minLength: 1, maxLength: 20 }),
  name: fc.string({ minLength: 1, maxLength: 20 }),
  arguments: text,
});
const messageArbitrary: fc.Arbitrary<Message> = fc
  .tuple(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 40 }),
      seq: fc.integer({ min: 1, max: 1e9 }),
      role: fc.constantFrom(...MessageSchema.shape.role.options),
      content: text,
      createdAt: timestamp,
    }),
    fc.record(
      {
        agent: text,
        toolCalls: fc.array(toolCall, { maxLength: 3 }),
        toolCallId: text,
        toolName: text,
        isError: fc.boolean(),
        durationMs: fc.double({ min: 0, max: 1e7, noNaN: true }),
        metadata: record,
      },
      optional,
    ),
  )
  .map(([required, extra]) => ({ ...required, ...extra }));

const control = fc.record(
  { kind: fc.constantFrom('handoff' as const, 'end_conversation' as const), target: text, reason: text },
  { requiredKeys: ['kind'] },
);
const pendingWriteArbitrary: fc.Arbitrary<PendingWrite> = fc
  .tuple(
    fc.record({
      toolCallId: text,
      toolName: text,
      agent: text,
      content: text,
      isError: fc.boolean(),
      durationMs: fc.double({ min: 0, max: 1e7, noNaN: true }),
      createdAt: timestamp,
    }),
    fc.record({ control }, optional),
  )
  .map(([required, extra]) => ({ ...required, ...extra }));

const conversationRef = fc.record({ branchId: id, throughSeq: whole });
const requestArbitrary: fc.Arbitrary<Request> = fc.oneof(
  fc.record({
    type: fc.constant('user_input' as const),
    id,
    agent: text,
    toolCallId: text,
    prompt: text,
    conversationRef,
    createdAt: timestamp,
  }),
  fc.record({
    type: fc.constant('tool_approval' as const),
    id,
    agent: text,
    toolCallId: text,
    toolName: text,
    arguments: text,
    conversationRef,
    createdAt: timestamp,
  }),
);
const patch = fc
  .tuple(
    fc.record({
      op: fc.constantFrom('add' as const, 'remove' as const, 'replace' as const),
      path: fc.array(fc.oneof(safeKey, fc.nat()), { maxLength: 3 }),
    }),
    fc.record({ value: safeJson }, optional),
  )
  .map(([required, extra]) => ({ ...required, ...extra }));
const checkpointArbitrary: fc.Arbitrary<Checkpoint> = fc.record({
  schemaVersion: fc.constant(CHECKPOINT_SCHEMA_VERSION),
  id,
  parentId: fc.option(id, { nil: null }),
  sessionId: id,
  branchId: id,
  step: whole,
  createdAt: timestamp,
  throughSeq: whole,
  machine: safeJson,
  pendingRequests: fc.array(requestArbitrary, { maxLength: 2 }),
  pendingWrites: fc.array(pendingWriteArbitrary, { maxLength: 2 }),
  statePatches: fc.record({ session: fc.array(patch, { maxLength: 2 }), branch: fc.array(patch, { maxLength: 2 }) }),
});

const episodeArbitrary: fc.Arbitrary<Episode> = fc
  .tuple(
    fc.record({
      id,
      sessionId: id,
      startedAt: timestamp,
      endedAt: timestamp,
      closedReason: text,
      agents: fc.array(text, { maxLength: 3 }),
      transcript: fc.array(
        fc
          .tuple(
            fc.record({ role: fc.constantFrom('user' as const, 'assistant' as const), content: text }),
            fc.record({ agent: text }, optional),
          )
          .map(([a, b]) => ({ ...a, ...b })),
        { maxLength: 3 },
      ),
      summary: text,
      keywords: fc.array(text, { maxLength: 3 }),
    }),
    fc.record(
      {
        tenantId: id,
        userId: id,
        embedding: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 4 }),
        metadata: record,
      },
      optional,
    ),
  )
  .map(([required, extra]) => ({ ...required, ...extra }));

/** The document as storage gives it back: through JSON (so -0 is 0, as in any store). */
const throughJson = <T>(value: T): unknown => JSON.parse(JSON.stringify(value));

const cases: [
  string,
  fc.Arbitrary<Record<string, unknown>>,
  (value: unknown) => unknown,
  string,
  string,
  (doc: never) => void,
][] = [
  [
    'session',
    sessionArbitrary as never,
    (v) => parseStoredSession(v, 'session'),
    'lastActivityAt',
    'id',
    () => undefined,
  ],
  [
    'branch',
    branchArbitrary as never,
    (v) => parseStoredBranch(v, 'branch'),
    'createdAt',
    'sessionId',
    () => undefined,
  ],
  [
    'message',
    messageArbitrary as never,
    (v) => parseStoredMessage(v, 'message'),
    'createdAt',
    '',
    (m: Message) => assertMessages([m]),
  ],
  [
    'checkpoint',
    checkpointArbitrary as never,
    (v) => parseStoredCheckpoint(v, 'checkpoint'),
    'createdAt',
    'branchId',
    (c: Checkpoint) => assertCheckpoint(c),
  ],
  [
    'pending write',
    pendingWriteArbitrary as never,
    (v) => parseStoredPendingWrite(v, 'pending write'),
    'createdAt',
    '',
    () => undefined,
  ],
  [
    'episode',
    episodeArbitrary as never,
    (v) => parseStoredEpisode(v, 'episode'),
    'endedAt',
    'sessionId',
    (e: Episode) => assertEpisode(e),
  ],
];

describe.each(cases)('%s (property)', (_name, arbitrary, parse, timestampField, idField, assertWritable) => {
  it('serialises to JSON and parses back to the same document, which its write accepts', () => {
    fc.assert(
      fc.property(arbitrary, (doc) => {
        const stored = throughJson(doc);
        expect(parse(stored)).toEqual(stored);
        expect(parse(JSON.parse(JSON.stringify(parse(stored))))).toEqual(stored);
        expect(() => assertWritable(doc as never)).not.toThrow();
      }),
      { seed: 5, numRuns: 300 },
    );
  });

  it('refuses on read a non-ISO timestamp or an id that fails the id rule, with a named error', () => {
    const badTimestamp = fc.constantFrom(
      'yesterday',
      '2025-01-01',
      '2025-01-01T00:00:00+01:00',
      '2025-02-29T00:00:00Z',
      '1735689600000',
      '',
    );
    const badId = fc.constantFrom('../x', 'a/b', '$gt', '.x', '-x', '', 'x'.repeat(129));
    fc.assert(
      fc.property(arbitrary, badTimestamp, badId, fc.boolean(), (doc, timestampValue, idValue, breakId) => {
        const stored = throughJson(doc) as Record<string, unknown>;
        if (breakId && idField !== '') stored[idField] = idValue;
        else stored[timestampField] = timestampValue;
        let error: unknown;
        try {
          parse(stored);
        } catch (caught) {
          error = caught;
        }
        expect(error instanceof DocumentCorruptError || error instanceof CheckpointCorruptError).toBe(true);
      }),
      { seed: 6, numRuns: 200 },
    );
  });
});

describe('the fast message check (property)', () => {
  it('accepts only messages zod accepts, and returns what zod returns for them', () => {
    fc.assert(
      fc.property(messageArbitrary, (message) => {
        const stored = throughJson(message);
        expect(fastAcceptsMessage(stored)).toBe(true);
        expect(parseStoredMessage(stored, 'message')).toEqual(MessageSchema.parse(stored));
      }),
      { seed: 8, numRuns: 300 },
    );
  });
});
