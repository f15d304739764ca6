import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointCorruptError, ConfigurationError, FileStore, InvalidIdError, StoreError } from '../src/index.js';
import { makeCheckpoint, makeMessage, makeMessages, makePendingWrite } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore');

/** Every file under `dir`, relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

async function storeWithSession(id = 'chat-1') {
  const directory = await tempDir();
  const store = new FileStore({ directory });
  await store.createSession({ id, userId: 'u-1' });
  const messagesFile = join(directory, 'sessions', id, 'messages', 'main.jsonl');
  return { directory, store, messagesFile };
}

describe('FileStore on disk', () => {
  it('keeps a folder per session: session.json, branch documents, one JSON line per message, no temp files', async () => {
    const { directory, store, messagesFile } = await storeWithSession();
    const messages = makeMessages(1, 3);
    await store.appendMessages('chat-1', 'main', messages);
    await store.forkBranch('chat-1', { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } });
    await store.updateSession('chat-1', { state: { verified: true } }, { expectedVersion: 1 });
    const checkpoint = makeCheckpoint('chat-1');
    await store.saveCheckpoint(checkpoint);
    await store.putPendingWrites('chat-1', 'main', checkpoint.id, [makePendingWrite('call-1')]);

    expect(await listFiles(directory)).toEqual([
      `sessions/chat-1/branches/alt.json`,
      `sessions/chat-1/branches/main.json`,
      `sessions/chat-1/checkpoints/main/000000000001-${checkpoint.id}.json`,
      `sessions/chat-1/checkpoints/main/000000000001-${checkpoint.id}.pending.jsonl`,
      `sessions/chat-1/messages/alt.jsonl`,
      `sessions/chat-1/messages/main.jsonl`,
      `sessions/chat-1/session.json`,
    ]);
    const lines = (await readFile(messagesFile, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line))).toEqual(messages);
    expect(JSON.parse(await readFile(join(directory, 'sessions/chat-1/session.json'), 'utf8'))).toMatchObject({ version: 2, state: { verified: true } });
  });

  it('reads what another FileStore instance on the same folder wrote (nothing is cached)', async () => {
    const { directory, store } = await storeWithSession();
    const other = new FileStore({ directory });
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    expect(await other.readMessages('chat-1', 'main')).toHaveLength(2);
    await other.appendMessages('chat-1', 'main', [makeMessage(3)]);
    expect((await store.readMessages('chat-1', 'main')).map((m) => m.seq)).toEqual([1, 2, 3]);
    await other.updateSession('chat-1', { metadata: { by: 'other' } }, { expectedVersion: 1 });
    expect((await store.getSession('chat-1'))?.metadata).toEqual({ by: 'other' });
  });
});

describe('FileStore torn lines', () => {
  it('ignores half a line after a crash, cuts it off on the next append, and continues the seq', async () => {
    const { directory, store, messagesFile } = await storeWithSession();
    const messages = makeMessages(1, 3);
    await store.appendMessages('chat-1', 'main', messages);
    const torn = JSON.stringify(makeMessage(4));
    await appendFile(messagesFile, torn.slice(0, Math.floor(torn.length / 2)));

    const reopened = new FileStore({ directory });
    expect(await reopened.readMessages('chat-1', 'main')).toEqual(messages);
    const fourth = makeMessage(4);
    expect(await reopened.appendMessages('chat-1', 'main', [fourth])).toEqual({ inserted: 1 });
    expect(await reopened.readMessages('chat-1', 'main')).toEqual([...messages, fourth]);
    const text = await readFile(messagesFile, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n').map((line) => JSON.parse(line).seq)).toEqual([1, 2, 3, 4]);
  });

  it('stores a retried message whose first write was torn', async () => {
    const { store, messagesFile } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    const third = makeMessage(3);
    await appendFile(messagesFile, JSON.stringify(third).slice(0, 20));
    expect(await store.readMessages('chat-1', 'main')).toHaveLength(2);
    expect(await store.appendMessages('chat-1', 'main', [third])).toEqual({ inserted: 1 });
    expect(await store.appendMessages('chat-1', 'main', [third])).toEqual({ inserted: 0 });
    expect((await store.readMessages('chat-1', 'main')).map((m) => m.id).at(-1)).toBe(third.id);
  });

  it('reads a file holding only a torn line as empty and appends from seq 1', async () => {
    const { store, messagesFile } = await storeWithSession();
    await writeFile(messagesFile, '{"id":"0199","seq":1,"ro');
    expect(await store.readMessages('chat-1', 'main')).toEqual([]);
    await store.forkBranch('chat-1', { branchId: 'f', parent: { branchId: 'main', atSeq: 0 } });
    await expect(store.forkBranch('chat-1', { branchId: 'g', parent: { branchId: 'main', atSeq: 1 } })).rejects.toThrow(/has 0 messages/);
    expect(await store.appendMessages('chat-1', 'main', [makeMessage(1)])).toEqual({ inserted: 1 });
    expect((await readFile(messagesFile, 'utf8')).split('\n')).toHaveLength(2);
  });

  it('reports a damaged complete line in the middle of a file as a StoreError naming the file', async () => {
    const { store, messagesFile } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 3));
    const lines = (await readFile(messagesFile, 'utf8')).split('\n');
    lines[1] = '{"seq": 2, "garbage';
    await writeFile(messagesFile, lines.join('\n'));
    const failure = store.readMessages('chat-1', 'main');
    await expect(failure).rejects.toBeInstanceOf(StoreError);
    await expect(failure).rejects.toThrow(/line 2 of .*main\.jsonl is damaged/);
  });

  it('ignores a torn pending-write line and appends after it', async () => {
    const { directory, store } = await storeWithSession();
    const checkpoint = makeCheckpoint('chat-1');
    await store.saveCheckpoint(checkpoint);
    await store.putPendingWrites('chat-1', 'main', checkpoint.id, [makePendingWrite('call-1')]);
    const pendingFile = join(directory, 'sessions/chat-1/checkpoints/main', `000000000001-${checkpoint.id}.pending.jsonl`);
    await appendFile(pendingFile, '{"toolCallId":"call-2","tool');
    expect((await store.loadCheckpoint('chat-1', 'main'))?.pendingWrites.map((w) => w.toolCallId)).toEqual(['call-1']);
    await store.putPendingWrites('chat-1', 'main', checkpoint.id, [makePendingWrite('call-2')]);
    expect((await store.loadCheckpoint('chat-1', 'main'))?.pendingWrites.map((w) => w.toolCallId)).toEqual(['call-1', 'call-2']);
  });
});

describe('FileStore ids and paths', () => {
  it.each(['../x', 'a/b', '..', '$x', '../../etc/passwd', 'a\\b'])('refuses the session id %j without creating any file', async (bad) => {
    const parent = await tempDir();
    const directory = join(parent, 'store');
    const store = new FileStore({ directory });
    await store.createSession({ id: 'ok' });
    const before = await listFiles(parent);
    await expect(store.createSession({ id: bad })).rejects.toBeInstanceOf(InvalidIdError);
    await expect(store.appendMessages(bad, 'main', [makeMessage(1)])).rejects.toBeInstanceOf(InvalidIdError);
    await expect(store.deleteSession(bad)).rejects.toBeInstanceOf(InvalidIdError);
    await expect(store.saveCheckpoint(makeCheckpoint(bad))).rejects.toBeInstanceOf(InvalidIdError);
    await expect(store.forkBranch('ok', { branchId: bad, parent: { branchId: 'main', atSeq: 0 } })).rejects.toBeInstanceOf(InvalidIdError);
    expect(await listFiles(parent)).toEqual(before);
    expect(await readdir(dirname(parent))).not.toContain('x');
  });
});

describe('FileStore damaged documents', () => {
  it('reports a checkpoint file that is not JSON, fails its schema, or sits in the wrong place as CheckpointCorruptError', async () => {
    const { directory, store } = await storeWithSession();
    const older = makeCheckpoint('chat-1', { step: 1 });
    const newest = makeCheckpoint('chat-1', { step: 2, parentId: older.id });
    await store.saveCheckpoint(older);
    await store.saveCheckpoint(newest);
    const dir = join(directory, 'sessions/chat-1/checkpoints/main');
    const newestFile = join(dir, `000000000002-${newest.id}.json`);
    const original = await readFile(newestFile, 'utf8');

    await writeFile(newestFile, original.slice(0, 40));
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toBeInstanceOf(CheckpointCorruptError);
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toThrow(newestFile);
    // The manifest leaves out a file whose manifest fields cannot be read, and does not throw.
    expect((await store.listCheckpoints('chat-1', 'main')).map((c) => c.id)).toEqual([older.id]);
    expect(await store.loadCheckpoint('chat-1', 'main', older.id)).toEqual(older);

    await writeFile(newestFile, JSON.stringify({ ...JSON.parse(original), pendingRequests: 'lost' }));
    await expect(store.loadCheckpoint('chat-1', 'main', newest.id)).rejects.toBeInstanceOf(CheckpointCorruptError);

    await writeFile(newestFile, JSON.stringify({ ...JSON.parse(original), sessionId: 'chat-2' }));
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toThrow(/holds checkpoint .* of session "chat-2"/);

    await writeFile(newestFile, original);
    expect(await store.loadCheckpoint('chat-1', 'main')).toEqual(newest);
  });

  it('reports damaged pending writes as CheckpointCorruptError', async () => {
    const { directory, store } = await storeWithSession();
    const checkpoint = makeCheckpoint('chat-1');
    await store.saveCheckpoint(checkpoint);
    await writeFile(join(directory, 'sessions/chat-1/checkpoints/main', `000000000001-${checkpoint.id}.pending.jsonl`), '{"toolCallId":1}\n');
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toBeInstanceOf(CheckpointCorruptError);
  });

  it('reports a damaged session.json as a StoreError naming the file', async () => {
    const { directory, store } = await storeWithSession();
    const file = join(directory, 'sessions/chat-1/session.json');
    await writeFile(file, '{"id":"chat-1",');
    await expect(store.getSession('chat-1')).rejects.toBeInstanceOf(StoreError);
    await expect(store.getSession('chat-1')).rejects.toThrow(file);
    await writeFile(file, JSON.stringify({ id: 'chat-1', version: 'one' }));
    await expect(store.getSession('chat-1')).rejects.toThrow(/fails its schema/);
  });

  it('wraps I/O failures as StoreError with the cause', async () => {
    const parent = await tempDir();
    const file = join(parent, 'not-a-folder');
    await writeFile(file, 'x');
    const store = new FileStore({ directory: file });
    const failure = await store.createSession({ id: 'chat-1' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).message).toContain(file);
    expect(((failure as StoreError).cause as { code?: string }).code).toMatch(/EEXIST|ENOTDIR/);
  });

  it('refuses a missing directory option and calls after close', async () => {
    expect(() => new FileStore({ directory: '' })).toThrow(ConfigurationError);
    const { store } = await storeWithSession();
    await store.close();
    await expect(store.getSession('chat-1')).rejects.toBeInstanceOf(StoreError);
  });

  it('removes a deleted session folder entirely', async () => {
    const { directory, store } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    expect(await store.deleteSession('chat-1')).toBe(true);
    expect(await readdir(join(directory, 'sessions'))).toEqual([]);
    expect(await readdir(join(directory, 'trash'))).toEqual([]);
    await expect(stat(join(directory, 'sessions/chat-1'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
