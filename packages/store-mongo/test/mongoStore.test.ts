/**
 * MongoStore specifics beyond the conformance suite: configuration, driver failures, retried
 * updates, round trips per turn, TTL retention.
 */
import { ConcurrencyError, ConfigurationError, StoreError } from '@baton/core';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint, makeMessage } from '../../../test/conformance/fixtures.js';
import { freePort, testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { MongoStore } from '../src/index.js';

describe('MongoStore', () => {
  const dbName = testDatabaseName('mongostore');
  const commands: CommandStartedEvent[] = [];
  let client: MongoClient;
  let isFerretDb: boolean;

  beforeAll(async () => {
    client = new MongoClient(mongoTestUrl(), { monitorCommands: true, serverSelectionTimeoutMS: 5_000 });
    client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.databaseName === dbName) commands.push(event);
    });
    isFerretDb = 'ferretdbVersion' in (await client.db('admin').command({ buildInfo: 1 }));
  });

  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  it('refuses a missing url and bad options with ConfigurationError', () => {
    expect(() => new MongoStore({ url: '' })).toThrow(
      /needs \{ url: "mongodb:\/\/host:27017\/" \} or \{ client: MongoClient \}/,
    );
    expect(() => new MongoStore({ url: 'mongodb://127.0.0.1:1/' }, { dbName: 'a/b' })).toThrow(ConfigurationError);
    expect(() => new MongoStore({ url: 'mongodb://127.0.0.1:1/' }, { collectionPrefix: 'x.$' })).toThrow(
      ConfigurationError,
    );
    expect(() => new MongoStore({ url: 'mongodb://127.0.0.1:1/' }, { checkpointTtlSeconds: -5 })).toThrow(
      /checkpointTtlSeconds must be a positive whole number/,
    );
    expect(() => new MongoStore({ url: 'not a url' })).toThrow(ConfigurationError);
    for (const operationTimeoutMS of [0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      expect(() => new MongoStore({ url: 'mongodb://127.0.0.1:1/' }, { operationTimeoutMS })).toThrow(
        /operationTimeoutMS must be a positive whole number of milliseconds/,
      );
    }
  });

  it('turns an unreachable server into a StoreError that keeps the driver error', async () => {
    const store = new MongoStore(
      { url: `mongodb://127.0.0.1:${await freePort()}/` },
      { serverSelectionTimeoutMS: 300 },
    );
    const error = await store.createSession({ id: 'nowhere' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(/unreachable or the connection was lost/);
    expect((error as StoreError).cause).toBeInstanceOf(Error);
    await store.close();
    await expect(store.getSession('nowhere')).rejects.toThrow(/this MongoStore is closed/);
  });

  it('leaves a client it was given open when it closes', async () => {
    const store = new MongoStore({ client }, { dbName });
    await store.createSession({ id: 'shared-client' });
    await store.close();
    expect(await client.db(dbName).command({ ping: 1 })).toMatchObject({ ok: 1 });
  });

  it('strips _id and bookkeeping fields from what it returns', async () => {
    const store = new MongoStore({ client }, { dbName });
    const created = await store.createSession({ id: 'plain', metadata: { a: 1 } });
    const updated = await store.updateSession(created.id, { metadata: { a: 2 } }, { expectedVersion: 1 });
    for (const value of [created, updated, await store.getSession('plain'), (await store.listBranches('plain'))[0]]) {
      expect(Object.keys(value ?? {})).not.toEqual(expect.arrayContaining(['_id']));
      expect(value).not.toHaveProperty('order');
      expect(value).not.toHaveProperty('lastChange');
    }
  });

  for (const versionClaims of [false, true]) {
    it(`${versionClaims ? 'with' : 'without'} version claims, a retried update whose first attempt landed returns the session, a different change is refused`, async () => {
      const store = new MongoStore({ client }, { dbName, versionClaims });
      const id = `retry-${versionClaims}`;
      await store.createSession({ id });
      const change = { metadata: { turn: 1 }, lastActivityAt: '2025-01-01T00:00:00.000Z' };
      const first = await store.updateSession(id, change, { expectedVersion: 1 });
      const retried = await store.updateSession(id, change, { expectedVersion: 1 });
      expect(retried).toEqual(first);
      await expect(store.updateSession(id, { metadata: { turn: 'other' } }, { expectedVersion: 1 })).rejects.toThrow(
        /at version 2, not 1/,
      );
      expect(await store.getSession(id)).toMatchObject({ version: 2, metadata: { turn: 1 } });
      expect(store.usesVersionClaims).toBe(versionClaims);
    });

    it(`costs ${versionClaims ? 4 : 3} round trips per turn ${versionClaims ? 'with' : 'without'} version claims`, async () => {
      const store = new MongoStore({ client }, { dbName, versionClaims });
      const id = `turns-${versionClaims}`;
      await store.createSession({ id });
      for (let turn = 1; turn <= 3; turn += 1) {
        commands.length = 0;
        await store.appendMessages(id, 'main', [makeMessage(2 * turn - 1), makeMessage(2 * turn)]);
        await store.saveCheckpoint(makeCheckpoint({ sessionId: id, step: turn }));
        await store.updateSession(id, { lastActivityAt: new Date().toISOString() }, { expectedVersion: turn });
        expect(commands.map((c) => c.commandName)).toEqual(
          versionClaims ? ['insert', 'insert', 'insert', 'findAndModify'] : ['insert', 'insert', 'findAndModify'],
        );
      }
    });
  }

  it('lets exactly one of five racing updates win, in each of 30 trials (default mode: claims on FerretDB)', async () => {
    const store = new MongoStore({ client }, { dbName });
    const outcomes: string[] = [];
    for (let trial = 0; trial < 30; trial += 1) {
      const id = `race-${trial}`;
      await store.createSession({ id });
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, writer) =>
          store.updateSession(id, { metadata: { writer } }, { expectedVersion: 1 }),
        ),
      );
      const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const losers = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      const stored = await store.getSession(id);
      outcomes.push(
        `${winners.length} won, ${losers.filter((e) => e instanceof ConcurrencyError).length} refused, stored v${stored?.version} by ${JSON.stringify(stored?.metadata)}`,
      );
      expect(stored?.metadata).toEqual(winners[0]?.metadata);
    }
    expect(outcomes).toEqual(
      Array.from({ length: 30 }, () => expect.stringMatching(/^1 won, 4 refused, stored v2 by \{"writer":\d\}$/)),
    );
  });

  it('keeps at most a handful of version claims per session however many updates it takes', async () => {
    const store = new MongoStore({ client }, { dbName, versionClaims: true });
    const id = 'claims-bounded';
    await store.createSession({ id });
    const claimCommands: string[] = [];
    for (let version = 1; version <= 33; version += 1) {
      commands.length = 0;
      await store.updateSession(id, { metadata: { version } }, { expectedVersion: version });
      if (version + 1 === 16 || version + 1 === 32) claimCommands.push(commands.map((c) => c.commandName).join(','));
    }
    // Updates reached versions 2…34; the ones reaching 16 and 32 deleted the claims up to them.
    expect(claimCommands).toEqual(['insert,findAndModify,delete', 'insert,findAndModify,delete']);
    const left = await store.collections.versionClaims.find({ sessionId: id }).sort({ version: 1 }).toArray();
    expect(left.map((claim) => claim.version)).toEqual([33, 34]);
    expect(await store.getSession(id)).toMatchObject({ version: 34, metadata: { version: 33 } });
  });

  it('picks version claims on FerretDB and atomic updates elsewhere when left on auto', async () => {
    const store = new MongoStore({ client }, { dbName });
    await store.init();
    expect(store.usesVersionClaims).toBe(isFerretDb);
  });

  it('creates TTL indexes for checkpointTtlSeconds, or says clearly that the server has none', async () => {
    const store = new MongoStore({ client }, { dbName: `${dbName}_ttl`, checkpointTtlSeconds: 3600 });
    if (isFerretDb) {
      await expect(store.init()).rejects.toThrow(
        /checkpointTtlSeconds \(3600\) needs TTL indexes, which this server does not support/,
      );
    } else {
      await store.init();
      const indexes = await store.collections.checkpoints.indexes();
      expect(indexes.find((i) => i.name === 'checkpoint_ttl')).toMatchObject({ expireAfterSeconds: 3600 });
    }
    await client.db(`${dbName}_ttl`).dropDatabase();
  });
});
