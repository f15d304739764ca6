/**
 * FileStore's assets on disk: where they are, what a crash leaves (a writer killed with SIGKILL in
 * the middle of an upload; a `.bin` whose `.json` was never written), and bytes changed on disk.
 */
import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DocumentCorruptError, FileStore } from '../src/index.js';
import { type Writer, waitForOutput } from './support/spawnWriter.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filestore-assets');
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const uploader = fileURLToPath(new URL('./support/assetUploader.ts', import.meta.url));

/** Starts `assetUploader.ts` (see there) as a child process. */
function spawnUploader(directory: string, sessionId: string): Writer {
  const child = spawn(process.execPath, ['--import', 'tsx', uploader, directory, sessionId], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stdout
    .setEncoding('utf8')
    .on('data', (chunk: string) => lines.push(...chunk.split('\n').filter((l) => l !== '')));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, lines, exited };
}

describe('FileStore assets on disk', () => {
  it('keeps each asset as <id>.bin and <id>.json in the session folder, beside the log, and reads it from a new store', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'a-1' });
    const ref = await store.putAsset('a-1', {
      name: 'photo.jpg',
      contentType: 'image/jpeg',
      bytes: new Uint8Array([1, 2, 3]),
    });
    expect((await readdir(join(directory, 'sessions/a-1/assets'))).sort()).toEqual([`${ref.id}.bin`, `${ref.id}.json`]);
    const reopened = new FileStore({ directory });
    expect(await reopened.listAssets('a-1')).toEqual([ref]);
    expect([...(await reopened.getAsset('a-1', ref.id))!.bytes]).toEqual([1, 2, 3]);
  });

  it('lists no half asset after a writer is killed mid-upload, keeps the finished one, and takes new uploads', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory, lockStaleMs: 2000 });
    await store.createSession({ id: 'crash-asset' });
    const writer = spawnUploader(directory, 'crash-asset');
    await waitForOutput(writer, (lines) => lines.filter((l) => l.startsWith('chunk ')).length >= 3);
    const uploading = (await readdir(join(directory, 'sessions/crash-asset/assets'))).filter((n) => n.endsWith('.tmp'));
    expect(uploading).toHaveLength(1); // the upload in progress, as a temp file
    writer.child.kill('SIGKILL');
    expect((await writer.exited).signal).toBe('SIGKILL');

    const storedId = writer.lines.find((l) => l.startsWith('stored '))!.slice('stored '.length);
    const reopened = new FileStore({ directory, lockStaleMs: 2000 });
    expect((await reopened.listAssets('crash-asset')).map((r) => [r.id, r.name, r.size])).toEqual([
      [storedId, 'first.bin', 1000],
    ]);
    const next = await reopened.putAsset('crash-asset', {
      name: 'next.txt',
      contentType: 'text/plain',
      bytes: Buffer.from('after the crash'),
    });
    expect((await reopened.listAssets('crash-asset')).map((r) => r.name)).toEqual(['first.bin', 'next.txt']);
    expect(Buffer.from((await reopened.getAsset('crash-asset', next.id))!.bytes).toString()).toBe('after the crash');
  });

  it('ignores a .bin whose .json was never written (a crash between the two) and removes it on the next upload', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'orphan' });
    const kept = await store.putAsset('orphan', { name: 'a.txt', contentType: 'text/plain', bytes: Buffer.from('a') });
    const assets = join(directory, 'sessions/orphan/assets');
    await writeFile(join(assets, 'left-behind.bin'), 'half');
    expect(await store.listAssets('orphan')).toEqual([kept]);
    expect(await store.getAsset('orphan', 'left-behind')).toBeUndefined();
    await store.putAsset('orphan', { name: 'b.txt', contentType: 'text/plain', bytes: Buffer.from('b') });
    expect((await readdir(assets)).filter((n) => n.startsWith('left-behind'))).toEqual([]);
  });

  it('throws DocumentCorruptError naming the file when the bytes changed on disk, and lists the asset still', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    await store.createSession({ id: 'changed' });
    const ref = await store.putAsset('changed', {
      name: 'a.txt',
      contentType: 'text/plain',
      bytes: Buffer.from('original'),
    });
    await writeFile(join(directory, `sessions/changed/assets/${ref.id}.bin`), 'tampered');
    const error = await store.getAsset('changed', ref.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocumentCorruptError);
    expect((error as DocumentCorruptError).document).toContain(`${ref.id}.bin`);
    expect(await store.listAssets('changed')).toEqual([ref]);
  });
});
