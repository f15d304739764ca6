/**
 * The corpus of saved documents (test/corpus, see its README) keeps loading: every saved version of
 * every kind, through each store's public API, and the paused turn it holds resumes. A document of
 * a newer version than the code knows is refused by name, never misread.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Checkpoint, FileStore, InMemoryStore, UnsupportedSchemaVersionError } from '@baton/core';
import {
  parseStoredBranch,
  parseStoredCheckpoint,
  parseStoredEpisode,
  parseStoredMessage,
  parseStoredSession,
} from '@baton/core/store-kit';
import { MongoStore } from '@baton/store-mongo';
import { BSON, type Document, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS, checkCorpus, resumeCorpus } from './corpus/corpusScenario.js';
import { testDatabaseName } from './support/mongoServer.js';
import { mongoTestUrl } from './support/mongoTestUrl.js';

const corpusDir = new URL('./corpus/', import.meta.url);
const FILE_VERSIONS = ['v1'];
const MONGO_VERSIONS = ['v1', 'v2'];
const COLLECTIONS = ['sessions', 'branches', 'messages', 'checkpoints', 'pendingWrites', 'episodes', 'meta'] as const;

async function copyOfFileCorpus(version: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), `baton-corpus-${version}-`));
  await cp(new URL(`file/${version}/`, corpusDir), directory, { recursive: true });
  return directory;
}

describe('FileStore loads the saved FileStore folders', () => {
  for (const version of FILE_VERSIONS) {
    it(`loads file/${version} through the API and resumes its paused turn`, async () => {
      const directory = await copyOfFileCorpus(version);
      try {
        const store = new FileStore({ directory });
        await checkCorpus(store);
        await resumeCorpus(store);
        await store.close();
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });
  }

  it('refuses a session document of a newer schemaVersion with UnsupportedSchemaVersionError', async () => {
    const directory = await copyOfFileCorpus('v1');
    try {
      const file = join(directory, 'sessions', CORPUS.sessionId, 'session.json');
      await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), schemaVersion: 99 }));
      const store = new FileStore({ directory });
      await expect(store.getSession(CORPUS.sessionId, { tenantId: CORPUS.tenantId })).rejects.toBeInstanceOf(
        UnsupportedSchemaVersionError,
      );
      await store.close();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('InMemoryStore takes the saved documents through the write API', () => {
  it('parses every document of file/v1 and the conversation resumes', async () => {
    const root = new URL('file/v1/', corpusDir);
    const read = async (path: string) => JSON.parse(await readFile(new URL(path, root), 'utf8')) as unknown;
    const lines = async (path: string) =>
      (await readFile(new URL(path, root), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown);
    const store = new InMemoryStore();
    const scope = { tenantId: CORPUS.tenantId };
    for (const id of [CORPUS.sessionId, CORPUS.closedSessionId]) {
      const session = parseStoredSession(await read(`sessions/${id}/session.json`), id);
      await store.createSession({
        id,
        tenantId: CORPUS.tenantId,
        userId: CORPUS.userId,
        createdAt: session.createdAt,
        metadata: session.metadata,
        state: session.state,
      });
    }
    const messages = (await lines(`sessions/${CORPUS.sessionId}/messages/main.jsonl`)).map((m, i) =>
      parseStoredMessage(m, `line ${i + 1}`),
    );
    await store.appendMessages(CORPUS.sessionId, 'main', messages, scope);
    const alt = parseStoredBranch(await read(`sessions/${CORPUS.sessionId}/branches/alt.json`), 'alt');
    await store.forkBranch(CORPUS.sessionId, { branchId: alt.id, parent: alt.parent!, state: alt.state }, scope);
    const checkpointDir = new URL(`sessions/${CORPUS.sessionId}/checkpoints/main/`, root);
    const names = (await readdir(checkpointDir)).sort();
    const checkpoints: Checkpoint[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const checkpoint = parseStoredCheckpoint(await readFile(new URL(name, checkpointDir), 'utf8'), name);
      checkpoints.push(checkpoint);
      await store.saveCheckpoint(checkpoint, scope);
    }
    for (const name of names.filter((n) => n.endsWith('.pending.jsonl'))) {
      const owner = checkpoints.find((c) => name.includes(c.id))!;
      const writes = (await readFile(new URL(name, checkpointDir), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      await store.putPendingWrites(CORPUS.sessionId, 'main', owner.id, writes, scope);
    }
    await store.saveEpisode(parseStoredEpisode(await read(`episodes/${CORPUS.closedSessionId}.json`), 'episode'));
    await checkCorpus(store);
    await resumeCorpus(store);
  });
});

describe('MongoStore loads the saved MongoDB collections (Extended JSON)', () => {
  let client: MongoClient;
  const databases: string[] = [];

  beforeAll(async () => {
    client = new MongoClient(mongoTestUrl(), { serverSelectionTimeoutMS: 5_000 });
  });
  afterAll(async () => {
    for (const name of databases) await client.db(name).dropDatabase();
    await client.close();
  });

  /** A fresh database holding the saved collections of `version`. */
  async function databaseOf(version: string): Promise<string> {
    const dbName = testDatabaseName(`corpus-${version}`);
    databases.push(dbName);
    for (const name of COLLECTIONS) {
      let text: string;
      try {
        text = await readFile(new URL(`mongo/${version}/${name}.json`, corpusDir), 'utf8');
      } catch {
        continue; // a collection the version had no documents in
      }
      const docs = BSON.EJSON.parse(text, { relaxed: false }) as Document[];
      await client.db(dbName).collection(`baton_${name}`).insertMany(docs);
    }
    return dbName;
  }

  for (const version of MONGO_VERSIONS) {
    it(`loads mongo/${version} through the API (tenant ids filled in on open) and resumes its paused turn`, async () => {
      const dbName = await databaseOf(version);
      const store = new MongoStore({ client }, { dbName });
      await checkCorpus(store);
      const db = client.db(dbName);
      for (const name of ['messages', 'branches', 'checkpoints', 'pendingWrites']) {
        const docs = await db.collection(`baton_${name}`).find({ sessionId: CORPUS.sessionId }).toArray();
        expect(docs.length, name).toBeGreaterThan(0);
        expect(
          docs.map((d) => d.tenantId),
          name,
        ).toEqual(docs.map(() => CORPUS.tenantId));
      }
      await resumeCorpus(store);
      await store.close();
    });
  }

  it('refuses documents of a newer schemaVersion with UnsupportedSchemaVersionError', async () => {
    const dbName = await databaseOf('v2');
    const db = client.db(dbName);
    const store = new MongoStore({ client }, { dbName });
    await db
      .collection('baton_messages')
      .updateOne({ _id: `${CORPUS.sessionId}/main/2` as never }, { $set: { schemaVersion: 3 } });
    await expect(store.readMessages(CORPUS.sessionId, 'main', { tenantId: CORPUS.tenantId })).rejects.toBeInstanceOf(
      UnsupportedSchemaVersionError,
    );
    await db
      .collection('baton_episodes')
      .updateOne({ _id: CORPUS.closedSessionId as never }, { $set: { schemaVersion: 3 } });
    await expect(store.getEpisode(CORPUS.closedSessionId, { tenantId: CORPUS.tenantId })).rejects.toBeInstanceOf(
      UnsupportedSchemaVersionError,
    );
    await store.close();
  });
});
