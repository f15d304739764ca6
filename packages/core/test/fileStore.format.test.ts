import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-format');
const corpusV1 = fileURLToPath(new URL('./fixtures/fileStore-v1', import.meta.url));

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
    expect((await store.findEpisodes({ tenantId: 'acme', userId: 'u-42' })).map((e) => e.summary)).toEqual(['Refunded a double charge.']);
  });

  it('appends to a version 1 folder in the same format', async () => {
    const { store, directory } = await openCopy(corpusV1);
    expect(await store.appendMessages('corpus-v1', 'main', [makeMessage(4)], acme)).toEqual({ inserted: 1 });
    const lines = (await readFile(join(directory, 'sessions/corpus-v1/messages/main.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line).seq)).toEqual([1, 2, 3, 4]);
    expect(await store.updateSession('corpus-v1', { status: 'closed' }, { expectedVersion: 1, ...acme })).toMatchObject({ version: 2, status: 'closed' });
  });
});
