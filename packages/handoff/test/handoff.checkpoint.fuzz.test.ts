/**
 * Byte-mutation fuzzing of the checkpoint the handoff runtime loads: a paused session's newest
 * checkpoint document (its routing snapshot, pending request and state patches) is damaged in the
 * session log (the mutated text stored in its place: as JSON when it still parses, else as the
 * damaged text), and
 * a fresh workflow opens the session. The open must either fail with a named Baton error (not one
 * wrapping a TypeError or RangeError) or give a session whose routing state and pending requests
 * are well-formed.
 *
 *   CI: 200 runs, fixed seed.
 *   BATON_FUZZ_RUNS=1000 npx vitest run --project @baton/handoff test/handoff.checkpoint.fuzz.test.ts
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileStore, isBatonError, RequestSchema } from '@baton/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  aimedMutationArbitrary,
  applyMutation,
  FuzzTally,
  fuzzRuns,
  fuzzSeed,
  fuzzTimeoutMs,
  readOutcome,
} from '../../core/test/support/documentMutations.js';
import { sealLogRecord } from '../../core/test/support/sessionLogFile.js';
import { collect, ofType, tempDir } from './support/helpers.js';
import { askingDesk } from './support/scenarioDesks.js';

const STATES = new Set(['idle', 'running', 'awaitingRequest', 'closed']);
const tally = new FuzzTally();
let dir: { path: string; dispose(): Promise<void> };

beforeAll(async () => {
  dir = await tempDir('baton-checkpoint-fuzz-');
  const { workflow, store } = askingDesk(new FileStore({ directory: dir.path }), 2);
  const session = await workflow.session({ id: 'chat-1', userId: 'u-1' });
  const events = await collect(session.send('I was charged twice'));
  expect(ofType(events, 'request')).toHaveLength(1);
  await store.close();
});

afterAll(async () => {
  console.log(
    `\nhandoff checkpoint fuzz (${fuzzRuns()} mutations, seed ${fuzzSeed()}), outcomes of opening the session:\n  ${tally.lines().join('\n  ')}`,
  );
  await dir?.dispose();
});

describe('opening a session whose checkpoint is damaged', () => {
  it('gives a named Baton error or a session with a well-formed routing state and pending requests', {
    timeout: fuzzTimeoutMs(),
  }, async () => {
    const file = join(dir.path, 'sessions/chat-1/log.jsonl');
    const log = await readFile(file, 'utf8');
    const lines = log.trimEnd().split('\n');
    const at = lines.findLastIndex((line) => line.includes('"op":"checkpoint"'));
    const record = JSON.parse(lines[at]!) as { ops: { op: string; checkpoint?: unknown }[] };
    const op = record.ops.findLast((o) => o.op === 'checkpoint')!;
    const original = JSON.stringify(op.checkpoint, null, 1); // one field per line, for the aimed mutations
    /** The log with the newest checkpoint document replaced by `text`. */
    const damagedLog = (text: string): string => {
      let stored: unknown;
      try {
        stored = JSON.parse(text);
      } catch {
        stored = text;
      }
      op.checkpoint = stored;
      // Sealed again: a damaged document inside a whole log record, as a writer of another version could store.
      return `${lines.map((line, index) => (index === at ? sealLogRecord(JSON.stringify({ ops: record.ops })) : line)).join('\n')}\n`;
    };
    const intact = await askingDesk(new FileStore({ directory: dir.path }), 2).workflow.session({ id: 'chat-1' });
    expect(intact.pendingRequests).toHaveLength(1);

    await fc.assert(
      fc.asyncProperty(aimedMutationArbitrary, async ({ mutation, line }) => {
        await writeFile(file, damagedLog(applyMutation(original, mutation, line).toString('utf8')));
        try {
          const { workflow, store } = askingDesk(new FileStore({ directory: dir.path }), 2);
          const outcome = await readOutcome(() => workflow.session({ id: 'chat-1' }), isBatonError);
          await store.close();
          if (outcome.kind === 'bug')
            throw new Error(`opening failed with a non-Baton error: ${String(outcome.error)}`, {
              cause: outcome.error,
            });
          if (outcome.kind === 'value') {
            const session = outcome.value as Awaited<ReturnType<typeof workflow.session>>;
            expect(STATES.has(session.routingState), session.routingState).toBe(true);
            expect(['triage', 'billing']).toContain(session.activeAgent);
            for (const request of session.pendingRequests) expect(RequestSchema.safeParse(request).success).toBe(true);
            tally.add('checkpoint document', `opened (${session.routingState})`);
          } else {
            tally.add('checkpoint document', outcome.name);
          }
        } finally {
          await writeFile(file, log);
        }
      }),
      { seed: fuzzSeed(), numRuns: fuzzRuns(), endOnFailure: true },
    );
  });
});
