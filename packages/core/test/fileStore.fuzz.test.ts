/**
 * Byte-mutation fuzzing of every file FileStore reads: a session log (format 2: a session, a fork,
 * messages, a checkpoint with pending writes), the documents of a format 1 session folder (copied
 * from the v1 corpus: session, branch documents, messages, a checkpoint and its pending writes) and
 * an episode (the owner index of episodes is hard links to the same bytes, so it is fuzzed with
 * them). Each run writes one damaged copy where the store reads it (a real file in a temp dir),
 * calls the store's reads, and restores the file. Every read must end in a named Baton error (not
 * one wrapping a TypeError or RangeError) or return documents that pass their write rules.
 *
 *   CI: 200 runs per document type, fixed seed.
 *   BATON_FUZZ_RUNS=1000 npx vitest run --project @baton/core test/fileStore.fuzz.test.ts
 *   all fuzz tests at 1,000 runs per type: npx --yes pnpm@10.34.8 fuzz
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStore, isBatonError, type Store } from '../src/index.js';
import {
  checkBranch,
  checkEpisode,
  checkMessage,
  checkSession,
  parseStoredCheckpoint,
} from '../src/store-kit/index.js';
import {
  aimedMutationArbitrary,
  applyMutation,
  FuzzTally,
  fuzzRuns,
  fuzzSeed,
  fuzzTimeoutMs,
  readOutcome,
} from './support/documentMutations.js';
import { makeCheckpoint, makeMessages, makePendingWrite } from './support/storeFixtures.js';

/** What a successful read may return: documents that pass their write rules. */
type Expect =
  | 'session?'
  | 'sessions'
  | 'branch?'
  | 'branches'
  | 'messages'
  | 'checkpoint?'
  | 'manifest'
  | 'episode?'
  | 'episodes'
  | 'ids';

const each = (value: unknown, check: (item: unknown) => boolean): boolean => Array.isArray(value) && value.every(check);
const checkpointOk = (value: unknown): boolean => {
  try {
    parseStoredCheckpoint(value, 'result');
    return true;
  } catch {
    return false;
  }
};

function passes(expect: Expect, value: unknown): boolean {
  switch (expect) {
    case 'session?':
      return value === undefined || checkSession(value).ok;
    case 'sessions':
      return each(value, (v) => checkSession(v).ok);
    case 'branch?':
      return value === undefined || checkBranch(value).ok;
    case 'branches':
      return each(value, (v) => checkBranch(v).ok);
    case 'messages':
      return (
        each(value, (v) => checkMessage(v).ok) &&
        (value as { seq: number }[]).every((m, i, all) => i === 0 || m.seq > all[i - 1]!.seq)
      );
    case 'checkpoint?':
      return value === undefined || checkpointOk(value);
    case 'manifest':
      return each(value, (v) => typeof (v as { id?: unknown }).id === 'string');
    case 'episode?':
      return value === undefined || checkEpisode(value).ok;
    case 'episodes':
      return each(value, (v) => checkEpisode(v).ok);
    case 'ids':
      return each(value, (v) => typeof v === 'string');
  }
}

interface Target {
  /** The file, relative to the store's folder. */
  file: () => string;
  reads: [string, Expect, (store: Store) => Promise<unknown>][];
}

/** The tenant of the fuzzed sessions: every session-scoped call names it. */
const acme = { tenantId: 'acme' };
const tally = new FuzzTally();
let directory: string;
/** The format 1 session of the corpus, copied beside the format 2 session `chat-1`. */
const V1 = 'corpus-v1';
const V1_CHECKPOINT = 'sessions/corpus-v1/checkpoints/main/000000000001-01956a2c-0000-7000-8000-0000000000c1';

/** The reads of a session, by what each may return. */
function sessionReads(id: string): Target['reads'] {
  return [
    ['getSession', 'session?', (s) => s.getSession(id)],
    ['getSession (tenant)', 'session?', (s) => s.getSession(id, acme)],
    ['listSessions', 'sessions', (s) => s.listSessions(acme)],
    ['deleteInactiveSessions (dry run)', 'ids', (s) => s.deleteInactiveSessions({ idleFor: 0, dryRun: true })],
    ['getBranch', 'branch?', (s) => s.getBranch(id, 'main', acme)],
    ['getBranch (fork)', 'branch?', (s) => s.getBranch(id, 'alt', acme)],
    ['listBranches', 'branches', (s) => s.listBranches(id, acme)],
    ['readMessages', 'messages', (s) => s.readMessages(id, 'main', acme)],
    ['readMessages (range)', 'messages', (s) => s.readMessages(id, 'main', { fromSeq: 2, throughSeq: 3, ...acme })],
    ['readMessages (fork)', 'messages', (s) => s.readMessages(id, 'alt', acme)],
    ['loadCheckpoint', 'checkpoint?', (s) => s.loadCheckpoint(id, 'main', undefined, acme)],
    ['listCheckpoints', 'manifest', (s) => s.listCheckpoints(id, 'main', acme)],
  ];
}

const targets: Record<string, Target> = {
  'session log (format 2)': { file: () => 'sessions/chat-1/log.jsonl', reads: sessionReads('chat-1') },
  'session document (format 1)': { file: () => `sessions/${V1}/session.json`, reads: sessionReads(V1) },
  'branch document (format 1, main)': { file: () => `sessions/${V1}/branches/main.json`, reads: sessionReads(V1) },
  'branch document (format 1, fork)': { file: () => `sessions/${V1}/branches/alt.json`, reads: sessionReads(V1) },
  'messages (format 1, JSON Lines)': { file: () => `sessions/${V1}/messages/main.jsonl`, reads: sessionReads(V1) },
  'checkpoint document (format 1)': {
    file: () => `${V1_CHECKPOINT}.json`,
    reads: [
      ['loadCheckpoint', 'checkpoint?', (s) => s.loadCheckpoint(V1, 'main', undefined, acme)],
      [
        'loadCheckpoint (id)',
        'checkpoint?',
        (s) => s.loadCheckpoint(V1, 'main', '01956a2c-0000-7000-8000-0000000000c1', acme),
      ],
      ['listCheckpoints', 'manifest', (s) => s.listCheckpoints(V1, 'main', acme)],
    ],
  },
  'pending writes (format 1, JSON Lines)': {
    file: () => `${V1_CHECKPOINT}.pending.jsonl`,
    reads: [['loadCheckpoint', 'checkpoint?', (s) => s.loadCheckpoint(V1, 'main', undefined, acme)]],
  },
  'episode document': {
    file: () => 'episodes/chat-1.json',
    reads: [
      ['getEpisode', 'episode?', (s) => s.getEpisode('chat-1', acme)],
      ['findEpisodes (tenant)', 'episodes', (s) => s.findEpisodes({ tenantId: 'acme' })],
      ['findEpisodes (user)', 'episodes', (s) => s.findEpisodes({ tenantId: 'acme', userId: 'u-1' })],
    ],
  },
};

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'baton-fuzz-'));
  await cp(fileURLToPath(new URL('./fixtures/fileStore-v1', import.meta.url)), directory, { recursive: true });
  const store = new FileStore({ directory });
  await store.createSession({
    id: 'chat-1',
    tenantId: 'acme',
    userId: 'u-1',
    metadata: { channel: 'web', tags: ['a', 'b'] },
    state: { verified: true },
  });
  const messages = makeMessages(1, 4);
  messages[1] = {
    ...messages[1]!,
    role: 'assistant',
    agent: 'triage',
    toolCalls: [{ id: 'call-1', name: 'handoff_to_billing', arguments: '{}' }],
  };
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
  await store.forkBranch(
    'chat-1',
    { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 }, state: { plan: 'b' } },
    acme,
  );
  await store.appendMessages('chat-1', 'alt', makeMessages(3, 1), acme);
  const checkpoint = makeCheckpoint('chat-1', {
    pendingWrites: [makePendingWrite('call-0')],
    statePatches: { session: [{ op: 'replace', path: ['verified'], value: false }], branch: [] },
  });
  await store.saveCheckpoint(checkpoint, acme);
  await store.putPendingWrites(
    'chat-1',
    'main',
    checkpoint.id,
    [makePendingWrite('call-1'), makePendingWrite('call-2')],
    acme,
  );
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
});

afterAll(async () => {
  console.log(
    `\nFileStore fuzz (${fuzzRuns()} mutations per document type, seed ${fuzzSeed()}), outcomes of every read:\n  ${tally.lines().join('\n  ')}`,
  );
  await rm(directory, { recursive: true, force: true });
});

describe('FileStore reads of damaged documents', () => {
  it.each(Object.keys(targets))(
    '%s: every mutation gives a named Baton error or documents that pass their write rules',
    { timeout: fuzzTimeoutMs() },
    async (type) => {
      const target = targets[type]!;
      const file = join(directory, target.file());
      const original = await readFile(file, 'utf8');
      expect(original.length).toBeGreaterThan(0);
      await fc.assert(
        fc.asyncProperty(aimedMutationArbitrary, async ({ mutation, line }) => {
          await writeFile(file, applyMutation(original, mutation, line));
          try {
            // A new store each time: a process opening the damaged folder (nothing of it in memory).
            const store = new FileStore({ directory });
            for (const [name, expected, read] of target.reads) {
              const outcome = await readOutcome(() => read(store), isBatonError);
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
            await writeFile(file, original);
          }
        }),
        { seed: fuzzSeed(), numRuns: fuzzRuns(), endOnFailure: true },
      );
      expect(await readFile(file, 'utf8')).toBe(original);
    },
  );
});
