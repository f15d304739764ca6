/**
 * Byte-mutation fuzzing of every MongoStore document type (sessions, branches, messages,
 * checkpoints, pending writes, version claims, episodes) on the test run's real server. Each run
 * takes one stored document as JSON, damages it (see test/support/documentMutations.ts), puts it
 * back with the driver under its `_id` (a text that is no longer a JSON object, or that the server
 * refuses, cannot be stored and is counted apart), calls the store's reads, and restores the
 * document. Every read must end in a named Baton error (not one wrapping a TypeError or
 * RangeError) or return documents that pass their write rules.
 *
 *   CI: 200 runs per document type, fixed seed.
 *   BATON_FUZZ_RUNS=1000 npx vitest run --project @baton/store-mongo test/mongoStore.fuzz.test.ts
 */
import { isBatonError, type Message } from '@baton/core';
import { checkBranch, checkEpisode, checkMessage, checkSession, parseStoredCheckpoint } from '@baton/core/store-kit';
import fc from 'fast-check';
import { type Collection, type Document, ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint, makeMessages } from '../../../test/conformance/fixtures.js';
import {
  aimedMutationArbitrary,
  applyMutation,
  FuzzTally,
  fuzzRuns,
  fuzzSeed,
  fuzzTimeoutMs,
  readOutcome,
} from '../../core/test/support/documentMutations.js';
import type { MongoStore } from '../src/index.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

type Expect =
  | 'session?'
  | 'sessions'
  | 'session'
  | 'branch?'
  | 'branches'
  | 'messages'
  | 'checkpoint?'
  | 'manifest'
  | 'episode?'
  | 'episodes'
  | 'ids';

const each = (value: unknown, check: (item: unknown) => boolean): boolean => Array.isArray(value) && value.every(check);

function passes(expected: Expect, value: unknown): boolean {
  switch (expected) {
    case 'session?':
      return value === undefined || checkSession(value).ok;
    case 'session':
      return checkSession(value).ok;
    case 'sessions':
      return each(value, (v) => checkSession(v).ok);
    case 'branch?':
      return value === undefined || checkBranch(value).ok;
    case 'branches':
      return each(value, (v) => checkBranch(v).ok);
    case 'messages':
      return (
        each(value, (v) => checkMessage(v).ok) &&
        (value as Message[]).every((m, i, all) => i === 0 || m.seq > all[i - 1]!.seq)
      );
    case 'checkpoint?':
      if (value === undefined) return true;
      try {
        parseStoredCheckpoint(value, 'result');
        return true;
      } catch {
        return false;
      }
    case 'manifest':
      return each(
        value,
        (v) =>
          typeof (v as { id?: unknown }).id === 'string' &&
          typeof (v as { createdAt?: unknown }).createdAt === 'string',
      );
    case 'episode?':
      return value === undefined || checkEpisode(value).ok;
    case 'episodes':
      return each(value, (v) => checkEpisode(v).ok);
    case 'ids':
      return each(value, (v) => typeof v === 'string');
  }
}

interface Target {
  collection: (store: MongoStore) => Collection<Document>;
  /** The `_id`s of the documents a run may damage (the run's `line` picks one). */
  ids: () => string[];
  reads: [string, Expect, (store: MongoStore) => Promise<unknown>][];
  /** Puts back what a read that writes (an update) changed. */
  reset?: () => Promise<void>;
}

/** The tenant of the fuzzed session: every session-scoped call names it. */
const acme = { tenantId: 'acme' };
const tally = new FuzzTally();
let test: TestMongoStore;
let checkpointId: string;
let pendingIds: string[];
let sessionVersion: number;
let originalSession: Document;

const targets: Record<string, Target> = {
  sessions: {
    collection: (s) => s.collections.sessions as unknown as Collection<Document>,
    ids: () => ['chat-1'],
    reads: [
      ['getSession', 'session?', (s) => s.getSession('chat-1')],
      ['getSession (tenant)', 'session?', (s) => s.getSession('chat-1', { tenantId: 'acme' })],
      ['listSessions', 'sessions', (s) => s.listSessions({ tenantId: 'acme' })],
      ['listSessions (user)', 'sessions', (s) => s.listSessions({ tenantId: 'acme', userId: 'u-1', status: 'active' })],
      [
        'deleteInactiveSessions (dry run)',
        'ids',
        (s) => s.deleteInactiveSessions({ idleFor: 0, dryRun: true, tenantId: 'acme' }),
      ],
    ],
  },
  branches: {
    collection: (s) => s.collections.branches as unknown as Collection<Document>,
    ids: () => ['chat-1/main', 'chat-1/alt'],
    reads: [
      ['getBranch (main)', 'branch?', (s) => s.getBranch('chat-1', 'main', acme)],
      ['getBranch (fork)', 'branch?', (s) => s.getBranch('chat-1', 'alt', acme)],
      ['listBranches', 'branches', (s) => s.listBranches('chat-1', acme)],
      ['readMessages (fork)', 'messages', (s) => s.readMessages('chat-1', 'alt', acme)],
    ],
  },
  messages: {
    collection: (s) => s.collections.messages as unknown as Collection<Document>,
    ids: () => ['chat-1/main/1', 'chat-1/main/2', 'chat-1/main/3', 'chat-1/main/4', 'chat-1/alt/3'],
    reads: [
      ['readMessages', 'messages', (s) => s.readMessages('chat-1', 'main', acme)],
      [
        'readMessages (range)',
        'messages',
        (s) => s.readMessages('chat-1', 'main', { fromSeq: 2, throughSeq: 3, ...acme }),
      ],
      ['readMessages (fork)', 'messages', (s) => s.readMessages('chat-1', 'alt', acme)],
    ],
  },
  checkpoints: {
    collection: (s) => s.collections.checkpoints as unknown as Collection<Document>,
    ids: () => [`chat-1/main/${checkpointId}`],
    reads: [
      ['loadCheckpoint', 'checkpoint?', (s) => s.loadCheckpoint('chat-1', 'main', undefined, acme)],
      ['loadCheckpoint (id)', 'checkpoint?', (s) => s.loadCheckpoint('chat-1', 'main', checkpointId, acme)],
      ['listCheckpoints', 'manifest', (s) => s.listCheckpoints('chat-1', 'main', acme)],
    ],
  },
  pendingWrites: {
    collection: (s) => s.collections.pendingWrites as unknown as Collection<Document>,
    ids: () => pendingIds,
    reads: [['loadCheckpoint', 'checkpoint?', (s) => s.loadCheckpoint('chat-1', 'main', undefined, acme)]],
  },
  versionClaims: {
    collection: (s) => s.collections.versionClaims as unknown as Collection<Document>,
    ids: () => [`session/chat-1/${sessionVersion + 1}`],
    reads: [
      [
        'updateSession (meets the claim)',
        'session',
        (s) => s.updateSession('chat-1', { metadata: { fuzz: true } }, { expectedVersion: sessionVersion, ...acme }),
      ],
    ],
    reset: async () => {
      const { sessions, versionClaims } = test.store.collections;
      await sessions.replaceOne({ _id: 'chat-1' }, originalSession as never);
      await versionClaims.deleteMany({ sessionId: 'chat-1', version: { $gt: sessionVersion + 1 } });
    },
  },
  episodes: {
    collection: (s) => s.collections.episodes as unknown as Collection<Document>,
    ids: () => ['chat-1'],
    reads: [
      ['getEpisode', 'episode?', (s) => s.getEpisode('chat-1', acme)],
      ['findEpisodes (tenant)', 'episodes', (s) => s.findEpisodes({ tenantId: 'acme' })],
      ['findEpisodes (user)', 'episodes', (s) => s.findEpisodes({ tenantId: 'acme', userId: 'u-1' })],
    ],
  },
};

/** The document as JSON text (ObjectIds and Dates as strings), without `_id`. */
function toText(doc: Document): string {
  const { _id, ...rest } = doc;
  return JSON.stringify(rest);
}

/** The damaged JSON back as a document: fields the mutation left untouched keep their BSON types (ObjectId, Date). */
function fromText(text: string, original: Document): Document | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const doc: Document = { ...(value as Document) };
  for (const [key, was] of Object.entries(original)) {
    if ((was instanceof ObjectId || was instanceof Date) && doc[key] === JSON.parse(JSON.stringify(was)))
      doc[key] = was;
  }
  doc._id = original._id;
  return doc;
}

beforeAll(async () => {
  test = await createTestMongoStore('fuzz', { branchCacheSize: 0 });
  const { store } = test;
  await store.createSession({
    id: 'chat-1',
    tenantId: 'acme',
    userId: 'u-1',
    metadata: { channel: 'web', tags: ['a', 'b'] },
    state: { verified: true },
  });
  const messages = makeMessages(1, 4);
  messages[1] = { ...messages[1]!, toolCalls: [{ id: 'call-1', name: 'handoff_to_billing', arguments: '{}' }] };
  messages[2] = {
    ...messages[2]!,
    role: 'tool',
    toolCallId: 'call-1',
    toolName: 'handoff_to_billing',
    isError: false,
    durationMs: 1.5,
    metadata: { control: { kind: 'handoff', target: 'billing' } },
  };
  await store.appendMessages('chat-1', 'main', messages, acme);
  await store.forkBranch('chat-1', { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } }, acme);
  await store.appendMessages('chat-1', 'alt', makeMessages(3, 1), acme);
  const write = (toolCallId: string) => ({
    toolCallId,
    toolName: 'look_up',
    agent: 'billing',
    content: '{"ok":true}',
    isError: false,
    durationMs: 5,
    createdAt: new Date().toISOString(),
  });
  const checkpoint = makeCheckpoint({ sessionId: 'chat-1', pendingWrites: [write('call-0')] });
  checkpointId = checkpoint.id;
  await store.saveCheckpoint(checkpoint, acme);
  await store.putPendingWrites('chat-1', 'main', checkpoint.id, [write('call-1'), write('call-2')], acme);
  pendingIds = (await store.collections.pendingWrites.find({ sessionId: 'chat-1' }).toArray()).map((d) => d._id);
  await store.saveEpisode({
    id: 'chat-1',
    sessionId: 'chat-1',
    tenantId: 'acme',
    userId: 'u-1',
    startedAt: '2025-01-01T12:00:00.000Z',
    endedAt: '2025-01-01T12:30:00.000Z',
    closedReason: 'resolved',
    agents: ['triage', 'billing'],
    transcript: [
      { role: 'user', content: 'charged twice' },
      { role: 'assistant', agent: 'billing', content: 'refunded' },
    ],
    summary: 'A refund.',
    keywords: ['refund'],
    embedding: [0.25, -1],
    metadata: { score: 5 },
  });
  sessionVersion = (
    await store.updateSession('chat-1', { lastActivityAt: new Date().toISOString() }, { expectedVersion: 1, ...acme })
  ).version;
  // A claim on the next version left by a writer that died: the update meets it and must judge it.
  await store.collections.versionClaims.insertOne({
    _id: `session/chat-1/${sessionVersion + 1}`,
    sessionId: 'chat-1',
    target: 'session/chat-1',
    version: sessionVersion + 1,
    digest: 'a-writer-that-died',
    at: new Date(Date.now() - 60_000),
  });
  originalSession = (await store.collections.sessions.findOne({ _id: 'chat-1' })) as Document;
});

afterAll(async () => {
  console.log(
    `\nMongoStore fuzz (${fuzzRuns()} mutations per document type, seed ${fuzzSeed()}), outcomes (per read; "not stored": not a JSON object or refused by the server):\n  ${tally.lines().join('\n  ')}`,
  );
  await test?.cleanup();
});

describe('MongoStore reads of damaged documents', () => {
  it.each(Object.keys(targets))(
    '%s: every mutation gives a named Baton error or documents that pass their write rules',
    { timeout: fuzzTimeoutMs() },
    async (type) => {
      const target = targets[type]!;
      const collection = target.collection(test.store);
      const everything = await collection.find({}).toArray();
      /** Puts the damaged document back; a server that cannot read what it stored (FerretDB 1.24 and a raw CR in a string) gets the collection rebuilt. */
      const restore = async (id: string, original: Document): Promise<void> => {
        try {
          await collection.replaceOne({ _id: id as never }, original);
        } catch {
          await collection.drop();
          await collection.insertMany(everything);
          tally.add(type, 'server could not read back what it stored');
        }
      };
      const originals = new Map<string, Document>();
      for (const id of target.ids()) {
        const doc = await collection.findOne({ _id: id as never });
        expect(doc, id).not.toBeNull();
        originals.set(id, doc as Document);
      }
      await fc.assert(
        fc.asyncProperty(aimedMutationArbitrary, async ({ mutation, line }) => {
          const ids = [...originals.keys()];
          const id = ids[line % ids.length]!;
          const original = originals.get(id)!;
          const damaged = fromText(applyMutation(toText(original), mutation).toString('utf8'), original);
          if (damaged === undefined) return void tally.add(type, 'not stored');
          try {
            await collection.replaceOne({ _id: id as never }, damaged);
          } catch {
            return void tally.add(type, 'not stored');
          }
          try {
            for (const [name, expected, read] of target.reads) {
              const outcome = await readOutcome(() => read(test.store), isBatonError);
              if (outcome.kind === 'bug')
                throw new Error(`${name} failed with a non-Baton error: ${String(outcome.error)}`, {
                  cause: outcome.error,
                });
              if (outcome.kind === 'value' && !passes(expected, outcome.value)) {
                throw new Error(
                  `${name} returned what its write would refuse: ${JSON.stringify(outcome.value).slice(0, 400)}`,
                );
              }
              tally.add(
                type,
                outcome.kind === 'value' ? (outcome.value === undefined ? 'undefined' : 'value') : outcome.name,
              );
            }
          } finally {
            await restore(id, original);
            await target.reset?.();
          }
        }),
        { seed: fuzzSeed(), numRuns: fuzzRuns(), endOnFailure: true },
      );
    },
  );
});
