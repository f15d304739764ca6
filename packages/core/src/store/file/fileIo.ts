/**
 * The durable file operations `FileStore` is built from: atomic document writes (temp file, fsync,
 * rename, fsync of the folder), create-if-absent, and reads that tell "missing" from "damaged".
 */
import { randomUUID } from 'node:crypto';
import { link, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DocumentCorruptError } from '../../errors.js';

/** Whether `error` is a Node.js system error with this `code` (`'ENOENT'`, `'EEXIST'`, …). */
export function hasErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/**
 * Flushes a folder's entries (a new, renamed or deleted file) to disk. Platforms that cannot open
 * a folder for syncing (Windows) skip it.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EBADF'].some((code) => hasErrorCode(error, code))) throw error;
  } finally {
    await handle?.close();
  }
}

/** Writes `data` to a new temp file beside `path` and fsyncs it; returns the temp file's path. */
async function writeTemp(path: string, data: string | Uint8Array): Promise<string> {
  const temp = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  return temp;
}

/**
 * Replaces `path` with `data` atomically: a reader (in any process) sees the old or the new
 * document, never a mix, and after a crash the file is one or the other.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = await writeTemp(path, data);
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await fsyncDir(dirname(path));
}

/**
 * Creates `path` with `data` only if it does not exist (atomically, by hard-linking a synced temp file).
 * @returns false when the file already existed (it is left as it was)
 */
export async function createFileExclusive(path: string, data: string): Promise<boolean> {
  const temp = await writeTemp(path, data);
  try {
    await link(temp, path);
  } catch (error) {
    if (hasErrorCode(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
  await fsyncDir(dirname(path));
  return true;
}

/**
 * Reads and parses a JSON document.
 * @returns the parsed value, or `undefined` when the file does not exist
 * @throws {DocumentCorruptError} when the file is not valid JSON (naming the file)
 */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = await readTextIfPresent(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DocumentCorruptError(
      `The document ${path} is not valid JSON; restore it from a backup or delete it.`,
      path,
      '(root)',
      { cause },
    );
  }
}

/** Reads a UTF-8 file; `undefined` when it does not exist (e.g. deleted by a concurrent prune). */
export async function readTextIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/** Reads a folder's entry names; a missing folder has none. */
export async function readDirNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return [];
    throw error;
  }
}

/** `fn` over `items`, at most `size` at a time (so a large folder does not open thousands of files at once). */
export async function mapInBatches<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, size = 32): Promise<R[]> {
  const out: R[] = [];
  for (let start = 0; start < items.length; start += size)
    out.push(...(await Promise.all(items.slice(start, start + size).map(fn))));
  return out;
}
