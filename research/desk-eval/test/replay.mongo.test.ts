/**
 * The replay on MongoDB (the run's FerretDB, or MONGODB_URL; see test/support/mongoGlobalSetup.ts):
 * five demo conversations, the longest of each of five flows, replayed once into a FileStore and
 * once into a MongoStore, must give the same routing figures, counts, outcomes and stored messages.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, MAIN_BRANCH, type Message, type Store } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { MongoStore } from '@baton/store-mongo';
import { type AbcdConversation, customerMessages, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { sessionIdFor } from '../src/replayConversation.js';
import { deterministicPart, formatReplayReport, type ReplayReport } from '../src/replayReport.js';
import { runReplay } from '../src/runReplay.js';

const dbName = testDatabaseName('support_desk_replay');
let dir: string;
let conversations: AbcdConversation[];
let onFiles: ReplayReport;
let onMongo: ReplayReport;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-mongo-'));
  const all = await loadConversations(DEMO_DATA_FILE);
  const flows = [...new Set(all.map((c) => c.flow))].sort().slice(0, 5);
  conversations = flows.map((flow) =>
    all
      .filter((c) => c.flow === flow)
      .reduce((a, b) => (customerMessages(b).length > customerMessages(a).length ? b : a)),
  );
  const ontology = loadOntology();
  onFiles = await runReplay({ conversations, training: all, ontology, deskStore: chooseDeskStore({ directory: dir }) });
  onMongo = await runReplay({
    conversations,
    training: all,
    ontology,
    deskStore: chooseDeskStore({ mongoUrl: mongoTestUrl(), mongoDbName: dbName }),
  });
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  await store.db.dropDatabase();
  await store.close();
});

/** A stored conversation without what differs between runs (ids, clocks). */
async function storedConversation(store: Store, conversation: AbcdConversation) {
  const sessionId = sessionIdFor(conversation.id);
  const messages = await store.readMessages(sessionId, MAIN_BRANCH);
  const session = await store.getSession(sessionId);
  const episode = await store.getEpisode(sessionId);
  return {
    messages: messages.map((m: Message) => [
      m.seq,
      m.role,
      m.agent ?? '',
      m.toolName ?? '',
      m.content,
      (m.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`).join(','),
    ]),
    session: { status: session?.status, closedReason: session?.closedReason, userId: session?.userId },
    episode: { agents: episode?.agents, transcript: episode?.transcript.map((t) => `${t.role}: ${t.content}`) },
  };
}

describe('the support-desk replay on MongoStore', () => {
  it('runs on MongoDB, in the database it was given', () => {
    expect(onMongo.store).toBe(`mongo (MongoDB database ${dbName})`);
    expect(onFiles.store).toMatch(/^file /);
    expect(onMongo.counts.conversations).toBe(5);
    expect(onMongo.counts.failed).toBe(0);
    expect(onMongo.counts.handoffs).toBeGreaterThanOrEqual(5);
    expect(onMongo.counts.episodes).toBe(5);
  });

  it('gives the same routing figures, counts and per-conversation outcomes as the FileStore replay', () => {
    expect(deterministicPart(onMongo)).toEqual(deterministicPart(onFiles));
    const routingText = (report: ReplayReport) => {
      const text = formatReplayReport(report);
      return text.slice(text.indexOf('Routing accuracy'), text.indexOf('Bytes stored'));
    };
    expect(routingText(onMongo)).toBe(routingText(onFiles));
    const strip = (report: ReplayReport) =>
      report.conversations.map(({ wallMs: _w, modelMs: _m, restarts: _r, ...rest }) => rest);
    expect(strip(onMongo)).toEqual(strip(onFiles));
  });

  it('stores the same messages, sessions and episodes as the FileStore', async () => {
    const files = new FileStore({ directory: dir });
    const mongo = new MongoStore({ url: mongoTestUrl() }, { dbName });
    try {
      for (const conversation of conversations) {
        const expected = await storedConversation(files, conversation);
        expect(expected.messages.length).toBeGreaterThan(0);
        expect(await storedConversation(mongo, conversation)).toEqual(expected);
      }
    } finally {
      await files.close();
      await mongo.close();
    }
  });
});
