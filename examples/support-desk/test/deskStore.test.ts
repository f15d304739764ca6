import { link, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseDeskStore } from '../src/desk/deskStore.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-store-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('chooseDeskStore', () => {
  it('clears a FileStore folder of an earlier run, and measures the bytes it holds', async () => {
    const folder = join(dir, 'run');
    const deskStore = chooseDeskStore({ directory: folder });
    expect(deskStore.kind).toBe('file');
    const store = await deskStore.open();
    await store.createSession({ id: 'old-run', userId: 'u' });
    await store.close();
    expect(await deskStore.bytes()).toBeGreaterThan(0);
    await deskStore.reset(['old-run']);
    expect(await readdir(dir)).not.toContain('run');
    expect(await deskStore.bytes()).toBe(0);
  });

  it('counts a file with several hard links once (the FileStore indexes episodes by owner with hard links)', async () => {
    const folder = join(dir, 'links');
    const deskStore = chooseDeskStore({ directory: folder });
    await mkdir(join(folder, 'episodes'), { recursive: true });
    await writeFile(join(folder, 'episodes', 'chat-1.json'), 'x'.repeat(1000));
    expect(await deskStore.bytes()).toBe(1000);
    await mkdir(join(folder, 'episodes', 'by-owner'));
    await link(join(folder, 'episodes', 'chat-1.json'), join(folder, 'episodes', 'by-owner', 'chat-1.json'));
    expect(await deskStore.bytes()).toBe(1000);
  });

  it('refuses to clear a folder that holds anything a FileStore does not write, and loses nothing', async () => {
    const folder = join(dir, 'home');
    await mkdir(folder);
    await writeFile(join(folder, 'thesis.tex'), 'precious');
    const error = await chooseDeskStore({ directory: folder })
      .reset([])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain(`Refusing to clear ${folder}: it holds "thesis.tex"`);
    expect(await readFile(join(folder, 'thesis.tex'), 'utf8')).toBe('precious');
  });

  it('keeps sessions in memory for ":memory:", deleting only the named ones on reset', async () => {
    const deskStore = chooseDeskStore({ directory: ':memory:' });
    const store = await deskStore.open();
    await store.createSession({ id: 'a' });
    await store.createSession({ id: 'b' });
    await deskStore.reset(['a']);
    expect(await store.getSession('a')).toBeUndefined();
    expect(await store.getSession('b')).toBeDefined();
    expect(deskStore.reopens).toBe(false);
    expect(await deskStore.bytes()).toBeUndefined();
  });
});
