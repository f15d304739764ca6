import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileStore, LogRecordCorruptError } from '../src/index.js';
import { makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-format');
const corpusV1 = fileURLToPath(new URL('./fixtures/fileStore-v1', import.meta.url));
/** A session log written by the format 2 code (lines without checksums): writeBatch turns, pending writes, a fork, a prune. */
const corpusV2 = fileURLToPath(new URL('./fixtures/fileStore-v2', import.meta.url));

/** A copy of a saved store folder, so tests never change the corpus. */
async function openCopy(corpus: string): Promise<{ store: FileStore; directory: string }> {
  const directory = await tempDir();
  await cp(corpus, directory, { recursive: true });
  return { store: new FileStore({ directory }), directory };
}

/** The corpus session's tenant: every call that names it carries the scope. */
const acme = { tenantId: 'acme' };

describe('FileStore format corpus', () => {
  it('keeps loading a store folder written by format version 1', async () => {
    const { store } = await openCopy(corpusV1);
    expect(await store.getSession('corpus-v1', { tenantId: 'acme' })).toEqual({
      id: 'corpus-v1',
      tenantId: 'acme',
      userId: 'u-42',
      status: 'active',
      createdAt: '2025-03-01T10:00:00.000Z',
      lastActivityAt: '2025-03-01T10:00:00.000Z',
      metadata: { channel: 'web' },
      state: { verified: true },
      version: 1,
    });
    const main = await store.readMessages('corpus-v1', 'main', acme);
    expect(main.map((m) => [m.seq, m.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
    ]);
    expect(main[1]?.toolCalls).toEqual([{ id: 'call-1', name: 'lookup_order', arguments: '{"order":"1234"}' }]);
    expect(main[2]?.metadata).toEqual({ durationMs: 12 });
    const alt = await store.readMessages('corpus-v1', 'alt', acme);
    expect(alt.map((m) => m.id)).toEqual([main[0]?.id, main[1]?.id, '01956a2c-0000-7000-8000-000000000004']);
    expect((await store.listBranches('corpus-v1', acme)).map((b) => [b.id, b.parent?.atSeq])).toEqual([
      ['main', undefined],
      ['alt', 2],
    ]);

    const checkpoint = await store.loadCheckpoint('corpus-v1', 'main', undefined, acme);
    expect(checkpoint).toMatchObject({ id: '01956a2c-0000-7000-8000-0000000000c1', step: 1, throughSeq: 3 });
    expect(checkpoint?.pendingWrites.map((w) => w.toolCallId)).toEqual(['call-2']);
    expect((await store.findEpisodes({ tenantId: 'acme', userId: 'u-42' })).map((e) => e.summary)).toEqual([
      'Refunded a double charge.',
    ]);
  });

  it('migrates a version 1 session to a session log on its first write, and appends to the log', async () => {
    const { store, directory } = await openCopy(corpusV1);
    const before = await everything(store, 'corpus-v1', acme);
    expect(await store.appendMessages('corpus-v1', 'main', [makeMessage(4)], acme)).toEqual({ inserted: 1 });
    expect(await readdir(join(directory, 'sessions/corpus-v1'))).toEqual(['log.jsonl']);
    const after = await everything(new FileStore({ directory }), 'corpus-v1', acme);
    expect(after.main.slice(0, 3)).toEqual(before.main);
    expect(after.main.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect({ ...after, main: before.main }).toEqual(before);
    expect(await store.updateSession('corpus-v1', { status: 'closed' }, { expectedVersion: 1, ...acme })).toMatchObject(
      { version: 2, status: 'closed' },
    );
  });

  it('loads a support-desk session written by the version 1 code (handoffs, step checkpoints, pending writes, a fork) before and after its migration', async () => {
    const { store, directory } = await openCopy(corpusV1);
    const before = await everything(store, 'desk-v1', acme);
    expect(before.session).toMatchObject({
      id: 'desk-v1',
      userId: 'u-7',
      status: 'closed',
      closedReason: 'resolved',
      version: 4,
    });
    expect(before.main.map((m) => `${m.seq} ${m.role} ${m.agent ?? ''}`)).toEqual([
      '1 user ',
      '2 assistant triage',
      '3 tool triage',
      '4 assistant billing',
      '5 tool billing',
      '6 assistant billing',
      '7 user ',
      '8 assistant triage',
      '9 tool triage',
      '10 assistant billing',
      '11 tool billing',
      '12 assistant billing',
    ]);
    expect(before.branches.map((b) => [b.id, b.parent?.atSeq])).toEqual([
      ['main', undefined],
      ['retry', 1],
    ]);
    expect(before.manifest.map((c) => c.step)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(before.newest).toMatchObject({ step: 15, throughSeq: 12 });
    const withWrite = await store.loadCheckpoint('desk-v1', 'main', '01a208c1-37b5-768a-b4a1-fa987709449b', acme);
    expect(withWrite?.pendingWrites.map((w) => w.toolCallId)).toContain('c4');

    await store.updateSession('desk-v1', { metadata: { migrated: true } }, { expectedVersion: 4, ...acme });
    expect(await readdir(join(directory, 'sessions/desk-v1'))).toEqual(['log.jsonl']);
    const after = await everything(new FileStore({ directory }), 'desk-v1', acme);
    expect(after.session).toMatchObject({ version: 5, metadata: { migrated: true } });
    expect({ ...after, session: before.session }).toEqual(before);
  });
});

describe('FileStore format 2 session logs (no checksums)', () => {
  it('keeps loading them, appends sealed lines to them, and still names a damaged line', async () => {
    const { store, directory } = await openCopy(corpusV2);
    const before = await everything(store, 'log-v2', acme);
    expect(before.session).toMatchObject({
      id: 'log-v2',
      tenantId: 'acme',
      userId: 'u-9',
      version: 7,
      state: { turn: 5 },
    });
    expect(before.main.map((m) => m.content)).toEqual(
      Array.from({ length: 13 }, (_, i) => `format 2 message ${i + 1}`),
    );
    expect((await store.readMessages('log-v2', 'alt', acme)).map((m) => m.content).at(-1)).toBe(
      'format 2 message on alt',
    );
    expect(before.manifest.map((c) => c.step)).toEqual([4, 5, 6]);
    expect(before.newest?.pendingWrites.map((w) => w.toolCallId)).toEqual(['call-7']);
    expect(await store.verify('log-v2')).toMatchObject({
      ok: true,
      version: 2,
      intactThroughSeq: { main: 13, alt: 5 },
    });

    expect(await store.appendMessages('log-v2', 'main', [makeMessage(14)], acme)).toEqual({ inserted: 1 });
    const file = join(directory, 'sessions/log-v2/log.jsonl');
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ version: 2 }); // not rewritten
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ crc32c: expect.stringMatching(/^[0-9a-f]{8}$/) });
    const after = await everything(new FileStore({ directory }), 'log-v2', acme);
    expect(after.main.map((m) => m.seq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect({ ...after, main: before.main }).toEqual(before);

    // A damaged unsealed line is still found (as JSON) and named.
    lines[4] = lines[4]!.slice(0, 40);
    await writeFile(file, `${lines.join('\n')}\n`);
    const damaged = new FileStore({ directory }).readMessages('log-v2', 'main', acme);
    await expect(damaged).rejects.toBeInstanceOf(LogRecordCorruptError);
    await expect(damaged).rejects.toMatchObject({ record: 5 });
  });
});

/** Every read of a session: the document, main's messages, branches, manifest and newest checkpoint. */
async function everything(store: FileStore, id: string, scope: { tenantId: string }) {
  return {
    session: await store.getSession(id, scope),
    main: await store.readMessages(id, 'main', scope),
    branches: await store.listBranches(id, scope),
    manifest: await store.listCheckpoints(id, 'main', scope),
    newest: await store.loadCheckpoint(id, 'main', undefined, scope),
  };
}
