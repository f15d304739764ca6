import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldOf } from '../src/folds.js';
import type { ConversationOutcome } from '../src/replayConversation.js';
import type { ReplayReport } from '../src/replayReport.js';
import { shareOut } from '../src/replayWorkers.js';
import { runReplay } from '../src/runReplay.js';
import { stratifiedSample } from '../src/stratifiedSample.js';
import { expectSameReport } from './support/comparableReport.js';

const FOLDS = 3;
const SEED = 'x';
const foldOfId = (id: string) => foldOf(id, FOLDS, SEED);

let dir: string;
/** All 82 demo conversations: what the models learn from. */
let all: AbcdConversation[];
/** The 30 replayed (stratified by flow), as `start --limit 30` replays them. */
let replayed: AbcdConversation[];
let onOne: ReplayReport;
let onTwo: ReplayReport;
/** Per fold of the seeded partition: its replayed conversations, held out, with models learned from the other folds only. */
const heldOut = new Map<number, ReplayReport>();

/** An outcome less what is measured (times). */
const counted = ({ wallMs: _w, modelMs: _m, ...outcome }: ConversationOutcome) => outcome;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-cv-'));
  all = await loadConversations(DEMO_DATA_FILE);
  replayed = stratifiedSample(all, 30, (c) => c.flow);
  const ontology = loadOntology();
  const crossValidation = { folds: FOLDS, seed: SEED };
  onOne = await runReplay({
    conversations: replayed,
    training: all,
    ontology,
    deskStore: chooseDeskStore({ directory: join(dir, 'one') }),
    crossValidation,
  });
  onTwo = await runReplay({
    conversations: replayed,
    training: all,
    ontology,
    deskStore: chooseDeskStore({ directory: join(dir, 'two') }),
    crossValidation,
    workers: 2,
  });
  for (let fold = 0; fold < FOLDS; fold += 1) {
    heldOut.set(
      fold,
      await runReplay({
        conversations: replayed.filter((c) => foldOfId(c.id) === fold),
        training: all.filter((c) => foldOfId(c.id) !== fold),
        evaluation: 'held-out',
        ontology,
        deskStore: chooseDeskStore({ directory: ':memory:' }),
      }),
    );
  }
}, 600_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a replay with crossValidation { folds: 3, seed: "x" }', () => {
  it('names that partition in its evaluation text and its report', () => {
    expect(onOne.counts.conversations).toBe(30);
    expect(onOne.counts.failed).toBe(0);
    expect(onOne.evaluation).toBe(
      '3-fold cross-validation (seed x) by sha256 of the conversation id: each conversation routed by models learned from the other 2 folds',
    );
    expect(onOne.crossValidation).toStrictEqual({ folds: 3, seed: 'x' });
    expect(JSON.parse(JSON.stringify(onOne)).crossValidation).toStrictEqual({ folds: 3, seed: 'x' });
    // The seeded folds of the sample: three, all used, so three trainings in one thread.
    expect(new Set(replayed.map((c) => foldOfId(c.id))).size).toBe(3);
    expect(onOne.measurements.trainings).toBe(3);
  });

  it('replays each conversation with models learned from the other seeded folds only: the same outcome as held out from them', () => {
    for (const [fold, report] of heldOut) {
      expect(report.evaluation).toMatch(/none of the replayed conversations is among them$/);
      expect(report.counts.failed).toBe(0);
      for (const outcome of report.conversations) {
        expect(foldOfId(outcome.id)).toBe(fold);
        expect(counted(onOne.conversations.find((o) => o.id === outcome.id)!)).toStrictEqual(counted(outcome));
      }
    }
    expect([...heldOut.values()].reduce((n, r) => n + r.counts.conversations, 0)).toBe(replayed.length);
  });

  it('gives the same report on two worker threads (FileStore) as in one thread, the workers sorting by the seeded folds', async () => {
    expectSameReport(onTwo, onOne);
    const shares = shareOut(
      replayed.map((c) => c.id),
      2,
      { folds: FOLDS, seed: SEED },
    );
    expect(onTwo.measurements.trainings).toBe(
      shares
        .map((share) => new Set(share.map((index) => foldOfId(replayed[index]!.id))).size)
        .reduce((a, b) => a + b, 0),
    );
    // Sorted by the seeded folds: each share is a run of whole folds but one cut, so at most 4 trainings.
    expect(onTwo.measurements.trainings).toBeLessThanOrEqual(4);
    expect((await readdir(join(dir, 'two', 'sessions'))).length).toBeGreaterThanOrEqual(replayed.length);
  });
});

describe('runReplay refuses a bad crossValidation with a named error, before touching the store', () => {
  it('folds out of range or more than the training conversations, a bad seed, held out or given models', async () => {
    const ontology = loadOntology();
    const untouched = join(dir, 'untouched');
    const attempt = (extra: Partial<Parameters<typeof runReplay>[0]>) =>
      runReplay({
        conversations: all.slice(0, 4),
        ontology,
        deskStore: chooseDeskStore({ directory: untouched }),
        ...extra,
      });
    await expect(attempt({ crossValidation: { folds: 1 } })).rejects.toThrow(InvalidInputError);
    await expect(attempt({ crossValidation: { folds: 51, seed: 's' } })).rejects.toThrow(/whole number from 2 to 50/);
    await expect(attempt({ crossValidation: { folds: 5 } })).rejects.toThrow(
      'Cannot cut 4 conversations into 5 cross-validation folds',
    );
    await expect(attempt({ crossValidation: { folds: 2, seed: '' } })).rejects.toThrow(/printable ASCII/);
    await expect(attempt({ crossValidation: { folds: 2 }, evaluation: 'held-out' })).rejects.toThrow(InvalidInputError);
    await expect(readdir(untouched)).rejects.toThrow(/ENOENT/);
  });
});
