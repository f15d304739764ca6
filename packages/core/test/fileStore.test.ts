import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CheckpointCorruptError,
  ConcurrencyError,
  ConfigurationError,
  FileStore,
  InvalidIdError,
  StoreError,
  UnsupportedSchemaVersionError,
} from '../src/index.js';
import { editSessionLog, type LogOpJson, logFileOf } from './support/sessionLogFile.js';
import { makeCheckpoint, makeMessage, makeMessages, makePendingWrite } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore');

/** Every file under `dir`, relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

async function storeWithSession(id = 'chat-1') {
  const directory = await tempDir();
  const store = new FileStore({ directory });
  await store.createSession({ id, userId: 'u-1' });
  return { directory, store, logFile: logFileOf(directory, id) };
}

/** The lines of a session log after its header, parsed. */
async function logLines(file: string): Promise<{ ops: LogOpJson[] }[]> {
  return (await readFile(file, 'utf8'))
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as { ops: LogOpJson[] });
}

describe('FileStore on disk', () => {
  it('keeps one log per session: a header, then one line per write with its operations, no temp files', async () => {
    const { directory, store, logFile } = await storeWithSession();
    const messages = makeMessages(1, 3);
    await store.appendMessages('chat-1', 'main', messages);
    await store.forkBranch('chat-1', { branchId: 'alt', parent: { branchId: 'main', atSeq: 2 } });
    await store.updateSession('chat-1', { state: { verified: true } }, { expectedVersion: 1 });
    const checkpoint = makeCheckpoint('chat-1');
    await store.saveCheckpoint(checkpoint);
    await store.putPendingWrites('chat-1', 'main', checkpoint.id, [makePendingWrite('call-1')]);

    // The session's lock file (a kernel lock is a lock of this file) stays while the session does.
    expect(await listFiles(directory)).toEqual(['locks/chat-1.lock', 'sessions/chat-1/log.jsonl']);
    const [header] = (await readFile(logFile, 'utf8')).split('\n');
    expect(JSON.parse(header!)).toMatchObject({
      format: 'baton-filestore-session-log',
      version: 3,
      sessionId: 'chat-1',
      crc32c: expect.stringMatching(/^[0-9a-f]{8}$/),
    });
    const lines = await logLines(logFile);
    expect(lines.map((line) => line.ops.map((op) => op.op))).toEqual([
      ['session'],
      ['branch'],
      ['messages'],
      ['branch'],
      ['session'],
      ['checkpoint'],
      ['pendingWrites'],
    ]);
    expect(lines[2]!.ops[0]!.messages).toEqual(messages);
    expect(lines[4]!.ops[0]!.session).toMatchObject({ version: 2, state: { verified: true } });
  });

  it('stores a writeBatch as one line: messages, branch state, session change and checkpoint together', async () => {
    const { store, logFile } = await storeWithSession();
    const before = (await logLines(logFile)).length;
    const checkpoint = makeCheckpoint('chat-1', { throughSeq: 2 });
    const result = await store.writeBatch({
      sessionId: 'chat-1',
      branchId: 'main',
      messages: makeMessages(1, 2),
      branch: { state: { plan: 'a' }, expectedVersion: 1 },
      session: { change: { state: { verified: true } }, expectedVersion: 1 },
      checkpoint,
    });
    expect(result).toMatchObject({
      inserted: 2,
      session: { version: 2 },
      branch: { version: 2, state: { plan: 'a' } },
    });
    const lines = await logLines(logFile);
    expect(lines).toHaveLength(before + 1);
    expect(lines.at(-1)!.ops.map((op) => op.op)).toEqual(['messages', 'branch', 'session', 'checkpoint']);
    // All or nothing: a stale version stores none of the batch.
    await expect(
      store.writeBatch({
        sessionId: 'chat-1',
        branchId: 'main',
        messages: [makeMessage(3)],
        session: { change: {}, expectedVersion: 1 },
      }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await store.readMessages('chat-1', 'main')).toHaveLength(2);
    expect(await logLines(logFile)).toHaveLength(before + 1);
  });

  it('reads what another FileStore instance on the same folder wrote (a cached session is checked against its file)', async () => {
    const { directory, store } = await storeWithSession();
    const other = new FileStore({ directory });
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    expect(await other.readMessages('chat-1', 'main')).toHaveLength(2);
    await other.appendMessages('chat-1', 'main', [makeMessage(3)]);
    expect((await store.readMessages('chat-1', 'main')).map((m) => m.seq)).toEqual([1, 2, 3]);
    await other.updateSession('chat-1', { metadata: { by: 'other' } }, { expectedVersion: 1 });
    expect((await store.getSession('chat-1'))?.metadata).toEqual({ by: 'other' });
    // A session deleted and created again under the same id elsewhere is read anew.
    await other.deleteSession('chat-1');
    expect(await store.getSession('chat-1')).toBeUndefined();
    await other.createSession({ id: 'chat-1', userId: 'u-2' });
    expect((await store.getSession('chat-1'))?.userId).toBe('u-2');
    expect(await store.readMessages('chat-1', 'main')).toEqual([]);
  });

  it('compacts a log that outgrew 1.25 times its live bytes: old session documents and pruned checkpoints go, everything live reads back the same', async () => {
    const { directory, store, logFile } = await storeWithSession();
    const other = new FileStore({ directory });
    expect(await other.getSession('chat-1')).toBeDefined(); // cached before the compaction
    const header = () => readFile(logFile, 'utf8').then((text) => text.slice(0, text.indexOf('\n')));
    const first = await header();
    let version = 1;
    for (let seq = 1; seq <= 400; seq += 1) {
      await store.appendMessages('chat-1', 'main', [makeMessage(seq, { content: 'x'.repeat(300) })]);
      await store.saveCheckpoint(makeCheckpoint('chat-1', { step: seq, throughSeq: seq }));
      version = (
        await store.updateSession('chat-1', { lastActivityAt: new Date().toISOString() }, { expectedVersion: version })
      ).version;
      if (seq % 50 === 0) await store.pruneCheckpoints('chat-1', 'main', { last: 2 });
    }
    expect(await header()).not.toBe(first); // a new log id: rewritten
    const lines = await logLines(logFile);
    const sessionOps = lines.flatMap((line) => line.ops).filter((op) => op.op === 'session').length;
    expect(sessionOps).toBeLessThan(400);
    const messages = await store.readMessages('chat-1', 'main');
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    for (const reader of [other, new FileStore({ directory })]) {
      expect(await reader.readMessages('chat-1', 'main')).toEqual(messages);
      expect(await reader.getSession('chat-1')).toEqual(await store.getSession('chat-1'));
      expect(await reader.listCheckpoints('chat-1', 'main')).toEqual(await store.listCheckpoints('chat-1', 'main'));
    }
    // The compacted log is indexed.
    expect(await listFiles(directory)).toEqual([
      'locks/chat-1.lock',
      'sessions/chat-1/log.index.json',
      'sessions/chat-1/log.jsonl',
    ]);
  }, 60_000);
});

describe('FileStore torn lines', () => {
  it('ignores half a line after a crash, cuts it off on the next append, and continues the seq', async () => {
    const { directory, store, logFile } = await storeWithSession();
    const messages = makeMessages(1, 3);
    await store.appendMessages('chat-1', 'main', messages);
    const torn = JSON.stringify({ ops: [{ op: 'messages', branchId: 'main', messages: [makeMessage(4)] }] });
    await appendFile(logFile, torn.slice(0, Math.floor(torn.length / 2)));

    for (const reader of [store, new FileStore({ directory })]) {
      expect(await reader.readMessages('chat-1', 'main')).toEqual(messages);
    }
    const reopened = new FileStore({ directory });
    const fourth = makeMessage(4);
    expect(await reopened.appendMessages('chat-1', 'main', [fourth])).toEqual({ inserted: 1 });
    expect(await reopened.readMessages('chat-1', 'main')).toEqual([...messages, fourth]);
    expect(await store.readMessages('chat-1', 'main')).toEqual([...messages, fourth]);
    const text = await readFile(logFile, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect((await logLines(logFile)).map((line) => line.ops[0]!.op)).toEqual([
      'session',
      'branch',
      'messages',
      'messages',
    ]);
  });

  it('stores a retried message whose first write was torn', async () => {
    const { store, logFile } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 2));
    const third = makeMessage(3);
    await appendFile(
      logFile,
      JSON.stringify({ ops: [{ op: 'messages', branchId: 'main', messages: [third] }] }).slice(0, 40),
    );
    expect(await store.readMessages('chat-1', 'main')).toHaveLength(2);
    expect(await store.appendMessages('chat-1', 'main', [third])).toEqual({ inserted: 1 });
    expect(await store.appendMessages('chat-1', 'main', [third])).toEqual({ inserted: 0 });
    expect((await store.readMessages('chat-1', 'main')).map((m) => m.id).at(-1)).toBe(third.id);
  });

  it('treats a log holding only a torn header as no session (a create cut off), and a create may take the id', async () => {
    const { directory, logFile } = await storeWithSession();
    await writeFile(logFile, '{"format":"baton-filestore-sess');
    const reopened = new FileStore({ directory });
    expect(await reopened.getSession('chat-1')).toBeUndefined();
    await reopened.createSession({ id: 'chat-1' });
    expect(await reopened.readMessages('chat-1', 'main')).toEqual([]);
  });

  it('reports a damaged complete line in the middle of the log as a StoreError naming the file and line', async () => {
    const { directory, store, logFile } = await storeWithSession();
    await store.appendMessages('chat-1', 'main', makeMessages(1, 3));
    await store.appendMessages('chat-1', 'main', makeMessages(4, 1));
    const lines = (await readFile(logFile, 'utf8')).split('\n');
    lines[3] = '{"ops": [{"op": "messages", "garbage';
    await writeFile(logFile, lines.join('\n'));
    const failure = new FileStore({ directory }).readMessages('chat-1', 'main');
    await expect(failure).rejects.toBeInstanceOf(StoreError);
    await expect(failure).rejects.toThrow(/line 4 of .*log\.jsonl is damaged/);
  });

  it('refuses a log of a newer format version, naming the upgrade', async () => {
    const { directory, logFile } = await storeWithSession();
    const [header, ...rest] = (await readFile(logFile, 'utf8')).split('\n');
    await writeFile(logFile, [JSON.stringify({ ...JSON.parse(header!), version: 4 }), ...rest].join('\n'));
    const refused = new FileStore({ directory }).getSession('chat-1');
    await expect(refused).rejects.toBeInstanceOf(UnsupportedSchemaVersionError);
    await expect(refused).rejects.toThrow(
      /session log of schemaVersion 4, but this version of @baton\/core reads session logs up to schemaVersion 3/,
    );
  });
});

describe('FileStore ids and paths', () => {
  it.each(['../x', 'a/b', '..', '$x', '../../etc/passwd', 'a\\b'])(
    'refuses the session id %j without creating any file',
    async (bad) => {
      // This test's own folder, two levels above the store: an id that escaped the store would write in it.
      const outer = await tempDir();
      const directory = join(outer, 'parent', 'store');
      const store = new FileStore({ directory });
      await store.createSession({ id: 'ok' });
      const everything = async () => (await readdir(outer, { recursive: true })).sort();
      const before = await everything();
      await expect(store.createSession({ id: bad })).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.appendMessages(bad, 'main', [makeMessage(1)])).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.deleteSession(bad)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.saveCheckpoint(makeCheckpoint(bad))).rejects.toBeInstanceOf(InvalidIdError);
      await expect(
        store.forkBranch('ok', { branchId: bad, parent: { branchId: 'main', atSeq: 0 } }),
      ).rejects.toBeInstanceOf(InvalidIdError);
      expect(await everything()).toEqual(before);
    },
  );
});

describe('FileStore damaged documents', () => {
  it('reports a logged checkpoint that is not JSON, fails its schema, or belongs elsewhere as CheckpointCorruptError; the others load', async () => {
    const { directory, store } = await storeWithSession();
    const older = makeCheckpoint('chat-1', { step: 1 });
    const newest = makeCheckpoint('chat-1', { step: 2, parentId: older.id });
    await store.saveCheckpoint(older);
    await store.saveCheckpoint(newest);
    const damage = (document: (original: Record<string, unknown>) => unknown) =>
      editSessionLog(directory, 'chat-1', (ops) => {
        const op = ops.find((o) => o.op === 'checkpoint' && o.id === newest.id)!;
        op.checkpoint = document(newest as unknown as Record<string, unknown>);
      });

    await damage(() => JSON.stringify(newest).slice(0, 40)); // stored as the cut-off text
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toBeInstanceOf(CheckpointCorruptError);
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toThrow(newest.id);
    // The manifest leaves out a checkpoint whose manifest fields cannot be read, and does not throw.
    expect((await store.listCheckpoints('chat-1', 'main')).map((c) => c.id)).toEqual([older.id]);
    expect(await store.loadCheckpoint('chat-1', 'main', older.id)).toEqual(older);

    await damage((original) => ({ ...original, pendingRequests: 'lost' }));
    await expect(store.loadCheckpoint('chat-1', 'main', newest.id)).rejects.toBeInstanceOf(CheckpointCorruptError);

    await damage((original) => ({ ...original, sessionId: 'chat-2' }));
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toThrow(/holds checkpoint .* of session "chat-2"/);

    await damage((original) => original);
    expect(await store.loadCheckpoint('chat-1', 'main')).toEqual(newest);
  });

  it('reports damaged pending writes as CheckpointCorruptError', async () => {
    const { directory, store } = await storeWithSession();
    const checkpoint = makeCheckpoint('chat-1');
    await store.saveCheckpoint(checkpoint);
    await store.putPendingWrites('chat-1', 'main', checkpoint.id, [makePendingWrite('call-1')]);
    await editSessionLog(directory, 'chat-1', (ops) => {
      ops.find((o) => o.op === 'pendingWrites')!.writes = [{ toolCallId: 1 }];
    });
    await expect(store.loadCheckpoint('chat-1', 'main')).rejects.toBeInstanceOf(CheckpointCorruptError);
  });

  it('reports a damaged session document as a StoreError naming the file', async () => {
    const { directory, store, logFile } = await storeWithSession();
    await editSessionLog(directory, 'chat-1', (ops) => {
      ops[0]!.session = { id: 'chat-1', version: 'one' };
    });
    await expect(store.getSession('chat-1')).rejects.toBeInstanceOf(StoreError);
    await expect(store.getSession('chat-1')).rejects.toThrow(logFile);
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
