import { cp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Episode, FileStore } from '../src/index.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-episodes');

function episode(id: string, owner: { tenantId?: string; userId?: string }, endedAt: string): Episode {
  return {
    id,
    sessionId: id,
    ...owner,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt,
    closedReason: 'resolved',
    agents: ['triage'],
    transcript: [{ role: 'user', content: `question of ${id}` }],
    summary: `summary of ${id}`,
    keywords: ['refund'],
  };
}

describe('FileStore episodes: the owner index', () => {
  it('links each episode into episodes/by-owner/<tenant>/<user>/ without copying its bytes', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    expect(
      await store.saveEpisode(episode('ep-1', { tenantId: 'acme', userId: 'u-1' }, '2026-01-02T00:00:00.000Z')),
    ).toBe(true);
    expect(await store.saveEpisode(episode('ep-2', {}, '2026-01-03T00:00:00.000Z'))).toBe(true);
    const primary = await stat(join(directory, 'episodes', 'ep-1.json'));
    const linked = await stat(join(directory, 'episodes', 'by-owner', 'acme', 'u-1', 'ep-1.json'));
    expect(linked.ino).toBe(primary.ino);
    expect(primary.nlink).toBe(2);
    expect(await readdir(join(directory, 'episodes', 'by-owner', '-', '-'))).toEqual(['ep-2.json']);
  });

  it("reads only the owner's episodes: another user's damaged episode file does not break a user's recall", async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.saveEpisode(episode('mine-1', { tenantId: 'acme', userId: 'u-1' }, '2026-01-02T00:00:00.000Z'));
    await store.saveEpisode(episode('mine-2', { tenantId: 'acme', userId: 'u-1' }, '2026-01-04T00:00:00.000Z'));
    await store.saveEpisode(episode('theirs', { tenantId: 'acme', userId: 'u-2' }, '2026-01-03T00:00:00.000Z'));
    await writeFile(join(directory, 'episodes', 'theirs.json'), '{ damaged');

    const found = await store.findEpisodes({ tenantId: 'acme', userId: 'u-1' });
    expect(found.map((e) => e.id)).toEqual(['mine-2', 'mine-1']);
    await expect(store.findEpisodes({ tenantId: 'acme' })).rejects.toThrow(/theirs\.json/);
  });

  it('repairs a missing index link when the save is retried (a crash between the two writes)', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    const saved = episode('ep-1', { tenantId: 'acme', userId: 'u-1' }, '2026-01-02T00:00:00.000Z');
    await store.saveEpisode(saved);
    await rm(join(directory, 'episodes', 'by-owner', 'acme', 'u-1', 'ep-1.json'));
    expect(await store.findEpisodes({ tenantId: 'acme', userId: 'u-1' })).toEqual([]);

    expect(await store.saveEpisode(saved)).toBe(false);
    expect((await store.findEpisodes({ tenantId: 'acme', userId: 'u-1' })).map((e) => e.id)).toEqual(['ep-1']);
  });

  it('builds the index once for a store written before the index existed', async () => {
    const directory = await tempDir();
    const legacy = fileURLToPath(new URL('./fixtures/fileStore-v1', import.meta.url));
    await cp(legacy, directory, { recursive: true });
    const before = await readdir(join(directory, 'episodes'));
    expect(before).not.toContain('by-owner');

    const store = new FileStore({ directory });
    expect((await store.findEpisodes({ tenantId: 'acme', userId: 'u-42' })).map((e) => e.id)).toEqual(['corpus-v1']);
    expect((await readdir(join(directory, 'episodes'))).filter((name) => name.startsWith('.'))).toEqual([]);
  });
});
