/**
 * Shard-readiness: every command MongoStore sends to the session-keyed collections (messages,
 * branches, checkpoints, pending writes, version claims, assets' files and chunks) names the session id, so a cluster
 * sharded on `{ sessionId: 'hashed' }` routes it to one shard (or to the shards of an `$in` list).
 * Tenancy: every read or update of one session document carries the caller's tenant in its filter,
 * and every command on messages, branches, checkpoints, pending writes and assets of a tenant's
 * session names the tenant (documents carry `tenantId`).
 */
import { createId } from '@baton/core';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCheckpoint } from '../../../test/conformance/fixtures.js';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { collectionNames, MongoStore } from '../src/index.js';

const KEYED = [
  'messages',
  'branches',
  'checkpoints',
  'pendingWrites',
  'versionClaims',
  'assetFiles',
  'assetChunks',
] as const;
/** The collections whose documents carry their session's tenant. */
const TENANTED = new Set(['messages', 'branches', 'checkpoints', 'pendingWrites', 'assetFiles', 'assetChunks']);

/** The parts of a command that select or carry documents, by command name. */
function selectors(name: string, command: Record<string, unknown>): unknown[] | undefined {
  switch (name) {
    case 'insert':
      return command.documents as unknown[];
    case 'find':
      return [command.filter];
    case 'count':
      return [command.query];
    case 'findAndModify':
      return [command.query];
    case 'update':
      return (command.updates as { q: unknown }[]).map((u) => u.q);
    case 'delete':
      return (command.deletes as { q: unknown }[]).map((d) => d.q);
    case 'aggregate':
      return [(command.pipeline as Record<string, unknown>[])[0]?.$match];
    default:
      return undefined;
  }
}

function namesSession(selector: unknown): boolean {
  if (selector === null || typeof selector !== 'object') return false;
  const sessionId = (selector as { sessionId?: unknown }).sessionId;
  if (typeof sessionId === 'string') return sessionId !== '';
  const list = (sessionId as { $in?: unknown } | undefined)?.$in;
  return Array.isArray(list) && list.length > 0 && list.every((s) => typeof s === 'string');
}

describe('MongoStore shard keys', () => {
  const dbName = testDatabaseName('shardkey');
  const names = collectionNames('baton_');
  const keyed = new Map<string, string>(KEYED.map((k) => [names[k], k]));
  const seen = new Set<string>();
  const offenders: string[] = [];
  const untenanted: string[] = [];
  const tenantless: string[] = [];
  let client: MongoClient;
  let store: MongoStore;

  beforeAll(async () => {
    client = new MongoClient(mongoTestUrl(), { monitorCommands: true, serverSelectionTimeoutMS: 5_000 });
    client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.databaseName !== dbName) return;
      const command = event.command as Record<string, unknown>;
      if (
        command[event.commandName] === names.sessions &&
        (event.commandName === 'find' || event.commandName === 'findAndModify')
      ) {
        const filter = (command.filter ?? command.query) as Record<string, unknown>;
        if (typeof filter._id === 'string' && !('tenantId' in filter))
          untenanted.push(`${event.commandName}: ${JSON.stringify(filter)}`);
      }
      const collection = keyed.get(String(command[event.commandName]));
      if (collection === undefined) return;
      const parts = selectors(event.commandName, command);
      if (parts === undefined) return; // createIndexes, getMore, killCursors: no document selection
      seen.add(`${collection}.${event.commandName}`);
      if (!parts.every(namesSession))
        offenders.push(`${event.commandName} on ${collection}: ${JSON.stringify(command).slice(0, 300)}`);
      if (
        TENANTED.has(collection) &&
        !parts.every((part) => part !== null && typeof part === 'object' && 'tenantId' in part)
      ) {
        tenantless.push(`${event.commandName} on ${collection}: ${JSON.stringify(command).slice(0, 300)}`);
      }
    });
    store = new MongoStore({ client }, { dbName, versionClaims: true });
  });

  afterAll(async () => {
    await store.close();
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  it('names the session id in every command on messages, branches, checkpoints, pending writes, claims and assets, and the tenant in every filter on one session and every command on its documents', async () => {
    const acme = { tenantId: 'acme' };
    const message = (seq: number, id = createId()) => ({
      id,
      seq,
      role: 'user' as const,
      content: `m${seq}`,
      createdAt: new Date().toISOString(),
    });
    const session = await store.createSession({ id: `s-${createId()}`, tenantId: 'acme', userId: 'u-1' });
    const m = [message(1), message(2), message(3), message(4)];
    await store.appendMessages(session.id, 'main', m.slice(0, 2), acme);
    await store.appendMessages(session.id, 'main', m.slice(0, 4), acme); // a retry overlapping what is stored
    await expect(store.appendMessages(session.id, 'main', [message(4), message(5)], acme)).rejects.toThrow(
      /another writer/,
    );
    await store.readMessages(session.id, 'main', { fromSeq: 2, ...acme });
    const fork = await store.forkBranch(session.id, { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } }, acme);
    await store.appendMessages(session.id, 'alt', [message(3)], acme);
    await store.readMessages(session.id, 'alt', acme);
    await store.getBranch(session.id, 'alt', acme);
    await store.listBranches(session.id, acme);
    await store.updateBranch(session.id, 'alt', { state: { plan: 1 } }, { expectedVersion: fork.version, ...acme });
    await expect(
      store.updateBranch(session.id, 'alt', { state: { plan: 2 } }, { expectedVersion: fork.version, ...acme }),
    ).rejects.toThrow(/version/);
    const first = makeCheckpoint({
      sessionId: session.id,
      step: 1,
      createdAt: new Date(Date.now() - 1000).toISOString(),
    });
    const second = makeCheckpoint({ sessionId: session.id, parentId: first.id, step: 2 });
    await store.saveCheckpoint(first, acme);
    await store.saveCheckpoint(second, acme);
    await store.saveCheckpoint(second, acme);
    await store.putPendingWrites(
      session.id,
      'main',
      second.id,
      [
        {
          toolCallId: 'call-1',
          toolName: 'lookup',
          agent: 'billing',
          content: '{}',
          isError: false,
          durationMs: 3,
          createdAt: new Date().toISOString(),
        },
      ],
      acme,
    );
    await store.loadCheckpoint(session.id, 'main', undefined, acme);
    await store.loadCheckpoint(session.id, 'main', first.id, acme);
    await store.listCheckpoints(session.id, 'main', acme);
    await store.deleteCheckpoint(session.id, 'main', first.id, acme);
    await store.pruneCheckpoints(session.id, 'main', { last: 1 }, acme);
    await store.deleteCheckpointsOlderThan(new Date(Date.now() + 60_000).toISOString(), { tenantId: 'acme' });
    await store.getSession(session.id, acme);
    await expect(store.listBranches(session.id, { tenantId: 'globex' })).rejects.toThrow(/does not exist/);
    await store.updateSession(session.id, { metadata: { turn: 1 } }, { expectedVersion: 1, ...acme });
    const asset = await store.putAsset(
      session.id,
      { name: 'scan.pdf', contentType: 'application/pdf', bytes: new Uint8Array(300 * 1024) },
      acme,
    );
    await store.getAsset(session.id, asset.id, acme);
    await store.listAssets(session.id, acme);
    await store.deleteAsset(session.id, asset.id, acme);
    await store.putAsset(session.id, { name: 'kept.png', contentType: 'image/png', bytes: new Uint8Array(10) }, acme); // deleted with the session
    await store.deleteBranch(session.id, 'alt', acme);
    await store.deleteSession(session.id, acme);
    const idle = await store.createSession({
      id: `s-${createId()}`,
      tenantId: 'acme',
      createdAt: '2020-01-01T00:00:00.000Z',
    });
    await store.appendMessages(idle.id, 'main', [message(1)], acme);
    const erased = await store.createSession({ id: `s-${createId()}`, tenantId: 'acme', userId: 'u-9' });
    await store.appendMessages(erased.id, 'main', [message(1)], acme);
    expect(await store.eraseUser({ ...acme, userId: 'u-9' })).toMatchObject({ sessions: 1, messages: 1 });
    expect(await store.deleteInactiveSessions({ idleFor: 1_000, tenantId: 'acme' })).toEqual([idle.id]);

    expect(offenders).toEqual([]);
    expect(untenanted).toEqual([]);
    expect(tenantless).toEqual([]);
    for (const expected of [
      'messages.insert',
      'messages.find',
      'messages.delete',
      'messages.aggregate',
      'branches.insert',
      'branches.find',
      'branches.findAndModify',
      'branches.delete',
      'checkpoints.insert',
      'checkpoints.find',
      'checkpoints.delete',
      'pendingWrites.insert',
      'pendingWrites.find',
      'pendingWrites.delete',
      'versionClaims.insert',
      'versionClaims.find',
      'versionClaims.delete',
      'assetFiles.insert',
      'assetFiles.find',
      'assetFiles.delete',
      'assetChunks.insert',
      'assetChunks.find',
      'assetChunks.delete',
    ]) {
      expect(seen, `no ${expected} command was observed`).toContain(expected);
    }
  });
});
