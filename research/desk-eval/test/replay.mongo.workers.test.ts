/**
 * The replay on two worker threads against MongoDB (the run's FerretDB, or MONGODB_URL; see
 * test/support/mongoGlobalSetup.ts): a sample of 20 demo conversations stratified by flow (as
 * `start --limit 20` takes it), replayed once on two workers and once in one thread, each into a
 * database of its own, must give the same report, and every stored message must be counted once.
 */
import { MAIN_BRANCH, type Store } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { MongoStore } from '@baton/store-mongo';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { FOLDS, foldOf } from '../src/folds.js';
import { sessionIdFor } from '../src/replayConversation.js';
import type { ReplayReport } from '../src/replayReport.js';
import { shareOut } from '../src/replayWorkers.js';
import { runReplay } from '../src/runReplay.js';
import { stratifiedSample } from '../src/stratifiedSample.js';
import { deterministic, printed } from './support/comparableReport.js';

const onTwoDb = testDatabaseName('support_desk_workers_2');
const onOneDb = testDatabaseName('support_desk_workers_1');
let conversations: AbcdConversation[];
let onTwo: ReplayReport;
let onOne: ReplayReport;

beforeAll(async () => {
  const all = await loadConversations(DEMO_DATA_FILE);
  conversations = stratifiedSample(all, 20, (c) => c.flow);
  const ontology = loadOntology();
  const replay = (workers: number, mongoDbName: string) =>
    runReplay({
      conversations,
      training: all,
      ontology,
      deskStore: chooseDeskStore({ mongoUrl: mongoTestUrl(), mongoDbName }),
      workers,
    });
  onTwo = await replay(2, onTwoDb);
  onOne = await replay(1, onOneDb);
}, 300_000);

afterAll(async () => {
  for (const dbName of [onTwoDb, onOneDb]) {
    const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
    await store.db.dropDatabase();
    await store.close();
  }
});

/** Every stored message of the sample, without what differs between runs (ids, clocks), as a new store reads them back. */
async function storedMessages(dbName: string) {
  const store: Store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  try {
    const messages: unknown[][] = [];
    let episodes = 0;
    for (const conversation of conversations) {
      const sessionId = sessionIdFor(conversation.id);
      for (const m of await store.readMessages(sessionId, MAIN_BRANCH))
        messages.push([sessionId, m.seq, m.role, m.agent ?? '', m.content]);
      if ((await store.getEpisode(sessionId)) !== undefined) episodes += 1;
    }
    return { messages, episodes };
  } finally {
    await store.close();
  }
}

describe('the support-desk replay on two worker threads against MongoDB', () => {
  it('replays every conversation of the sample in the database it was given', () => {
    expect(onTwo.store).toBe(`mongo (MongoDB database ${onTwoDb})`);
    expect(onTwo.counts.conversations).toBe(20);
    expect(onTwo.counts.failed).toBe(0);
    expect(onTwo.counts.episodes).toBe(20);
    // Each worker trained the folds of its share (a fold cut between the two is trained by both); one thread trains five.
    const shares = shareOut(
      conversations.map((c) => c.id),
      2,
      { folds: FOLDS },
    );
    expect(shares.every((share) => share.length > 0)).toBe(true);
    expect(onOne.measurements.trainings).toBe(5);
    expect(onTwo.measurements.trainings).toBe(
      shares
        .map((share) => new Set(share.map((index) => foldOf(conversations[index]!.id))).size)
        .reduce((a, b) => a + b, 0),
    );
  });

  it('gives the same report as one thread: routing, casework, counts, tokens, every outcome in input order', () => {
    expect(deterministic(onTwo)).toStrictEqual(deterministic(onOne));
    expect(printed(onTwo)).toStrictEqual(printed(onOne));
    expect(onTwo.conversations.map((c) => c.id)).toStrictEqual(conversations.map((c) => c.id));
  });

  it('counts every stored message once: the count a new store reads back, the same messages as one thread stored', async () => {
    const two = await storedMessages(onTwoDb);
    const one = await storedMessages(onOneDb);
    expect(two.messages.length).toBeGreaterThan(conversations.length);
    expect(onTwo.counts.messages).toBe(two.messages.length);
    expect(onOne.counts.messages).toBe(one.messages.length);
    expect(two.messages).toStrictEqual(one.messages);
    expect(two.episodes).toBe(20);
  });
});
