/**
 * Round trips a stateless worker pays: a process that opens a session from the store for every turn
 * (a load balancer that is not sticky). Each saved read is checked to stay right when it matters:
 * later pending writes are still loaded, a stale cached seq still appends in place, stores that open
 * one new database at once all start.
 */
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint, makeMessages, makePendingWrite } from '../../../test/conformance/fixtures.js';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { MongoStore } from '../src/index.js';

describe('MongoStore round trips for a stateless worker', () => {
  const dbName = testDatabaseName('roundtrips');
  const commands: CommandStartedEvent[] = [];
  let client: MongoClient;

  beforeAll(async () => {
    client = new MongoClient(mongoTestUrl(), { monitorCommands: true, serverSelectionTimeoutMS: 5_000 });
    client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.databaseName === dbName) commands.push(event);
    });
    await client.connect();
  });

  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  /** A store with nothing cached, as a worker that has never served this session; indexes made. */
  async function freshStore(): Promise<MongoStore> {
    const store = new MongoStore({ client }, { dbName });
    await store.init();
    return store;
  }

  /** The commands `action` sent, as `<command> <collection>`. */
  async function sent(action: () => Promise<unknown>): Promise<string[]> {
    commands.length = 0;
    await action();
    return commands.map((c) => `${c.commandName} ${String(c.command[c.commandName])}`);
  }

  it('starts every one of several stores that open a new database at the same moment', async () => {
    const url = mongoTestUrl();
    const fresh = testDatabaseName('initrace');
    const stores = Array.from({ length: 4 }, () => new MongoStore({ url }, { dbName: fresh }));
    try {
      const results = await Promise.allSettled(stores.map((s) => s.init()));
      expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok']);
      await stores[0]!.createSession({ id: 'after-race' });
      expect(await stores[3]!.getSession('after-race')).toMatchObject({ id: 'after-race' });
    } finally {
      await stores[0]!.db.dropDatabase();
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('loads a checkpoint with one read when no pending write was added to it, and still merges those added later', async () => {
    const writer = await freshStore();
    await writer.createSession({ id: 'cp' });
    const plain = makeCheckpoint({ sessionId: 'cp', step: 1 });
    await writer.saveCheckpoint(plain);
    const reader = await freshStore();
    await reader.getSession('cp'); // a worker opens the session first (this also learns its tenant)
    expect(await sent(() => reader.loadCheckpoint('cp', 'main'))).toEqual(['find baton_checkpoints']);

    const later = makeCheckpoint({ sessionId: 'cp', step: 2, parentId: plain.id });
    await writer.saveCheckpoint(later);
    await writer.putPendingWrites('cp', 'main', later.id, [makePendingWrite('call-1')]);
    const reread = await freshStore();
    await reread.getSession('cp');
    const commandsOfLoad = await sent(async () => {
      const loaded = await reread.loadCheckpoint('cp', 'main');
      expect(loaded?.id).toBe(later.id);
      expect(loaded?.pendingWrites.map((w) => w.toolCallId)).toEqual(['call-1']);
    });
    expect(commandsOfLoad).toEqual(['find baton_checkpoints', 'find baton_pendingWrites']);
  });

  it('reads the pending writes of a checkpoint saved by an older version (no mark on it)', async () => {
    const store = await freshStore();
    await store.createSession({ id: 'old-cp' });
    const checkpoint = makeCheckpoint({ sessionId: 'old-cp', step: 1 });
    await store.saveCheckpoint(checkpoint);
    await store.putPendingWrites('old-cp', 'main', checkpoint.id, [makePendingWrite('call-old')]);
    await client
      .db(dbName)
      .collection('baton_checkpoints')
      .updateOne({ sessionId: 'old-cp', id: checkpoint.id }, { $unset: { pendingWritesAdded: '' } });
    const loaded = await (await freshStore()).loadCheckpoint('old-cp', 'main');
    expect(loaded?.pendingWrites.map((w) => w.toolCallId)).toEqual(['call-old']);
  });

  it('opens a session it never served with one read per document kind, then appends with one insert', async () => {
    const first = await freshStore();
    await first.createSession({ id: 'turns' });
    await first.appendMessages('turns', 'main', makeMessages(1, 4));
    await first.saveCheckpoint(makeCheckpoint({ sessionId: 'turns', step: 1, throughSeq: 4 }));
    const worker = await freshStore();
    const opening = await sent(async () => {
      // What a handoff session's load asks of the store, in order.
      await worker.getSession('turns');
      await worker.getBranch('turns', 'main');
      const history = await worker.readMessages('turns', 'main');
      expect(history.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
      expect((await worker.loadCheckpoint('turns', 'main'))?.throughSeq).toBe(4);
    });
    expect(opening).toEqual([
      'find baton_sessions',
      'find baton_branches',
      'find baton_messages',
      'find baton_checkpoints',
    ]);
    expect(await sent(() => worker.appendMessages('turns', 'main', makeMessages(5, 4)))).toEqual([
      'insert baton_messages',
    ]);
    expect((await first.readMessages('turns', 'main')).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('appends in place when another worker appended after this one read the history (the cached seq is stale)', async () => {
    const a = await freshStore();
    const b = await freshStore();
    await a.createSession({ id: 'stale' });
    await a.appendMessages('stale', 'main', makeMessages(1, 2));
    await a.readMessages('stale', 'main'); // a now believes the branch ends at seq 2
    await b.readMessages('stale', 'main');
    await b.appendMessages('stale', 'main', makeMessages(3, 2)); // b serves the next turn
    await a.readMessages('stale', 'main', { throughSeq: 2 }); // a partial read says nothing about the end
    const next = makeMessages(5, 2);
    expect(await a.appendMessages('stale', 'main', next)).toEqual({ inserted: 2 });
    const stored = await b.readMessages('stale', 'main');
    expect(stored.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stored.slice(4).map((m) => m.id)).toEqual(next.map((m) => m.id));
  });

  it('prunes with one delete when no pruned checkpoint has pending writes, and still deletes those that have some', async () => {
    const store = await freshStore();
    await store.createSession({ id: 'prune' });
    const saved = [];
    for (let step = 1; step <= 4; step += 1) {
      const checkpoint = makeCheckpoint({ sessionId: 'prune', step, parentId: saved.at(-1)?.id ?? null });
      await store.saveCheckpoint(checkpoint);
      saved.push(checkpoint);
    }
    expect(await sent(() => store.pruneCheckpoints('prune', 'main', { last: 3 }))).toEqual([
      'find baton_checkpoints',
      'delete baton_checkpoints',
    ]);
    await store.putPendingWrites('prune', 'main', saved[1]!.id, [makePendingWrite('call-pruned')]);
    await store.putPendingWrites('prune', 'main', saved[3]!.id, [makePendingWrite('call-kept')]);
    const commandsOfPrune = await sent(() => store.pruneCheckpoints('prune', 'main', { last: 2 }));
    expect([...commandsOfPrune].sort()).toEqual([
      'delete baton_checkpoints',
      'delete baton_pendingWrites',
      'find baton_checkpoints',
    ]);
    expect((await store.listCheckpoints('prune', 'main')).map((c) => c.id)).toEqual([saved[2]!.id, saved[3]!.id]);
    const left = await client.db(dbName).collection('baton_pendingWrites').find({ sessionId: 'prune' }).toArray();
    expect(left.map((doc) => doc.toolCallId)).toEqual(['call-kept']);
    expect((await store.loadCheckpoint('prune', 'main'))?.pendingWrites.map((w) => w.toolCallId)).toEqual([
      'call-kept',
    ]);

    // A checkpoint saved by an older version carries no mark: its pending writes are deleted with it.
    const old = makeCheckpoint({ sessionId: 'prune', step: 5, parentId: saved[3]!.id });
    await store.saveCheckpoint(old);
    await store.putPendingWrites('prune', 'main', old.id, [makePendingWrite('call-old')]);
    await store.saveCheckpoint(makeCheckpoint({ sessionId: 'prune', step: 6, parentId: old.id }));
    await client
      .db(dbName)
      .collection('baton_checkpoints')
      .updateOne({ sessionId: 'prune', id: old.id }, { $unset: { pendingWritesAdded: '' } });
    await store.pruneCheckpoints('prune', 'main', { last: 1 });
    expect(await client.db(dbName).collection('baton_pendingWrites').countDocuments({ sessionId: 'prune' })).toBe(0);
  });
});
