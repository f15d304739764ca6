/**
 * Reads are as strict as writes: a stored document whose fields a write would refuse (a non-ISO
 * timestamp, an id that fails the id rule, an operator key in metadata) is refused on read with an
 * error naming the document and the field, and the writes refuse the same values.
 */
import { describe, expect, it } from 'vitest';
import {
  CheckpointCorruptError,
  DocumentCorruptError,
  FileStore,
  InMemoryStore,
  InvalidInputError,
  MAX_METADATA_DEPTH,
  NestingTooDeepError,
  StoreError,
} from '../src/index.js';
import { editSessionLog, type LogOpJson, logFileOf } from './support/sessionLogFile.js';
import { makeCheckpoint, makeMessages } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('strict-read');

async function storeWithSession() {
  const directory = await tempDir();
  const store = new FileStore({ directory });
  await store.createSession({ id: 'chat-1', userId: 'u-1' });
  return { directory, store, sessionFile: logFileOf(directory, 'chat-1') };
}

type Doc = Record<string, unknown>;

/** Edits the newest document an operation of kind `op` (matching `which`) holds in the session log. */
async function editLogged(
  directory: string,
  op: string,
  field: string,
  edit: (doc: Doc) => void,
  which: (o: LogOpJson) => boolean = () => true,
): Promise<string> {
  return editSessionLog(directory, 'chat-1', (ops) => {
    const found = ops.filter((o) => o.op === op && which(o)).at(-1);
    if (found === undefined) throw new Error(`No ${op} operation in the log.`);
    edit(found[field] as Doc);
  });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('the read should have been refused'),
    (error: unknown) => error,
  );
}

describe('FileStore reads sessions as strictly as it writes them', () => {
  it.each([
    ['createdAt', 'yesterday'],
    ['lastActivityAt', '2025-01-01 10:00:00'],
    ['closedAt', '2025-13-01T00:00:00Z'],
    ['tenantId', '../other-tenant'],
    ['userId', '$gt'],
    ['id', 'chat-1/../x'],
  ])(
    'refuses a logged session document whose %s is %j with a DocumentCorruptError naming the file and field',
    async (field, value) => {
      const { directory, store, sessionFile } = await storeWithSession();
      await editLogged(directory, 'session', 'session', (doc) => {
        doc[field] = value;
      });
      const error = await failure(store.getSession('chat-1'));
      expect(error).toBeInstanceOf(DocumentCorruptError);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as DocumentCorruptError).field).toBe(field);
      expect((error as Error).message).toContain(sessionFile);
      expect((error as Error).message).toContain(field);
      // Listings leave an unreadable session out rather than fail for every other one (see fileStore.damagedLine.test.ts).
      expect(await store.listSessions()).toEqual([]);
    },
  );

  it('refuses metadata with an operator key, as createSession does', async () => {
    const { directory, store } = await storeWithSession();
    await expect(store.createSession({ id: 'chat-2', metadata: { $where: '1' } })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await editLogged(directory, 'session', 'session', (doc) => {
      doc.metadata = { nested: { $where: '1' } };
    });
    await expect(store.getSession('chat-1')).rejects.toThrow(/metadata.*\$where/);
  });

  it('refuses metadata nested deeper than MAX_METADATA_DEPTH, as createSession does, with a DocumentCorruptError (no stack overflow)', async () => {
    const { directory, store } = await storeWithSession();
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let level = 1; level < 2_000; level += 1) deep = { a: deep };
    await expect(store.createSession({ id: 'chat-2', metadata: deep })).rejects.toBeInstanceOf(NestingTooDeepError);
    await editLogged(directory, 'session', 'session', (doc) => {
      doc.metadata = deep;
    });
    const error = await failure(store.getSession('chat-1'));
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect((error as DocumentCorruptError).field).toBe('metadata');
    expect((error as Error).message).toContain(`more than ${MAX_METADATA_DEPTH} levels`);
  });

  it('loads a session stored without userId (created without one) and a valid one unchanged', async () => {
    const { store } = await storeWithSession();
    const anonymous = await store.createSession({ id: 'chat-2' });
    expect(await store.getSession('chat-2')).toEqual(anonymous);
    expect((await store.getSession('chat-1'))?.userId).toBe('u-1');
  });

  it('refuses a branch document with a non-ISO createdAt or a parent id that fails the id rule', async () => {
    const { directory, store } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    await store.forkBranch('chat-1', { branchId: 'alt', parent: { branchId: 'main', atSeq: 1 } });
    const alt = (o: LogOpJson) => (o.branch as Doc).id === 'alt';
    await editLogged(
      directory,
      'branch',
      'branch',
      (doc) => {
        doc.parent = { branchId: '../main', atSeq: 1 };
      },
      alt,
    );
    await expect(store.getBranch('chat-1', 'alt')).rejects.toThrow(/parent\.branchId/);
    await editLogged(
      directory,
      'branch',
      'branch',
      (doc) => {
        doc.parent = { branchId: 'main', atSeq: 1 };
        doc.createdAt = 1735689600000;
      },
      alt,
    );
    await expect(store.readMessages('chat-1', 'alt')).rejects.toBeInstanceOf(DocumentCorruptError);
  });

  it('refuses a message line with a non-ISO createdAt, naming the line', async () => {
    const { directory, store } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    await editSessionLog(directory, 'chat-1', (ops) => {
      const messages = ops.find((o) => o.op === 'messages')!.messages as Doc[];
      messages[1]!.createdAt = 'now';
    });
    const error = await failure(store.readMessages('chat-1', 'main'));
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect((error as DocumentCorruptError).field).toBe('createdAt');
    expect((error as Error).message).toMatch(/line 4 of .*log\.jsonl \(operation 1\), message 2/); // the header, the session, main, then the messages
  });
});

describe('FileStore reads checkpoints as strictly as it writes them', () => {
  it.each([
    ['createdAt', 'Tue, 01 Jan 2025 00:00:00 GMT'],
    ['parentId', '../cp'],
  ])('refuses a checkpoint whose %s is %j with CheckpointCorruptError naming the field', async (field, value) => {
    const { directory, store } = await storeWithSession();
    const checkpoint = makeCheckpoint('chat-1');
    await store.saveCheckpoint(checkpoint);
    await expect(store.saveCheckpoint(makeCheckpoint('chat-1', { [field]: value }))).rejects.toThrow();
    await editLogged(directory, 'checkpoint', 'checkpoint', (doc) => {
      doc[field] = value;
    });
    const error = await failure(store.loadCheckpoint('chat-1', 'main'));
    expect(error).toBeInstanceOf(CheckpointCorruptError);
    expect((error as Error).message).toContain(field);
    expect((error as Error).message).toContain(checkpoint.id);
  });
});

describe('every store refuses on write what reads refuse', () => {
  it.each([
    ['InMemoryStore', async () => new InMemoryStore()],
    ['FileStore', async () => new FileStore({ directory: await tempDir() })],
  ])('%s refuses non-ISO timestamps in createSession and updateSession', async (_name, create) => {
    const store = await create();
    await expect(store.createSession({ id: 'chat-1', createdAt: 'today' })).rejects.toBeInstanceOf(InvalidInputError);
    await store.createSession({ id: 'chat-1' });
    await expect(
      store.updateSession('chat-1', { lastActivityAt: '2025-01-01' }, { expectedVersion: 1 }),
    ).rejects.toThrow(/lastActivityAt/);
    // biome-ignore lint/suspicious/noExplicitAny: a caller bypassing the types
    await expect(
      store.updateSession('chat-1', { status: 'paused' as any }, { expectedVersion: 1 }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect((await store.getSession('chat-1'))?.version).toBe(1);
  });
});
