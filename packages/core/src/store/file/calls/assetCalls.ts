/**
 * `FileStore`'s assets: files uploaded to a session, kept beside its log in `<session>/assets/`,
 * each as two files: `<assetId>.bin` (the bytes) and `<assetId>.json` (its `AssetRef`). The log
 * knows nothing of them, so they never weigh on replay, compaction or checkpoints, and a session's
 * delete (one rename of its folder) takes them along.
 *
 * An upload streams into a temp file (outside the session lock, so a slow upload blocks no turn),
 * fsyncs it, then under the lock renames it to `.bin` and writes the `.json` atomically. Only a
 * `.json` makes an asset exist, and it is written last: a crash at any point leaves no half asset
 * listed, only a temp file or a `.bin` without its `.json`, which the next upload removes.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AssetRef } from '../../../conversation/asset.js';
import { NotFoundError } from '../../../errors.js';
import { assertValidId } from '../../../ids.js';
import { AssetMeter, checkAssetInput, parseStoredAssetRef, verifyAssetBytes } from '../../assets/assetInput.js';
import type { PutAssetInput, StoredAsset, TenantScope } from '../../store.js';
import { assertSessionId } from '../../storeRules.js';
import { assertTenantScope } from '../../tenantScope.js';
import { fsyncDir, hasErrorCode, mapInBatches, readDirNames, readJsonFile, writeFileAtomic } from '../fileIo.js';
import type { FileSessions } from '../fileSessions.js';
import { requireSession } from '../log/logPlans.js';

/** A temp file older than this is left over from a crashed upload (a live one is being written now), in ms. */
const STALE_UPLOAD_MS = 24 * 60 * 60_000;

/** Throws {@link NotFoundError} unless the session exists in the scope's tenant. */
async function requireStoredSession(sessions: FileSessions, sessionId: string, scope: TenantScope): Promise<void> {
  requireSession(await sessions.logs.read(sessionId), sessionId, scope);
}

/** `FileStore.putAsset`: see the module comment. */
export async function putAsset(
  sessions: FileSessions,
  sessionId: string,
  input: PutAssetInput,
  scope: TenantScope,
  maxBytes: number,
): Promise<AssetRef> {
  assertSessionId(sessionId);
  assertTenantScope(scope);
  const checked = checkAssetInput(input);
  const meter = new AssetMeter(checked, maxBytes);
  const { layout, locks } = sessions;
  const dir = layout.assetsDir(sessionId);
  await locks.run(sessionId, async () => {
    await requireStoredSession(sessions, sessionId, scope);
    await mkdir(dir, { recursive: true });
  });
  const temp = join(dir, `.upload-${randomUUID()}.tmp`);
  try {
    // `flush`: the bytes are on disk before the rename makes them an asset.
    await pipeline(
      Readable.from(meter.chunks(), { objectMode: false }),
      createWriteStream(temp, { flags: 'wx', flush: true }),
    );
    const ref = meter.ref(sessionId);
    await locks.run(sessionId, async () => {
      await requireStoredSession(sessions, sessionId, scope); // deleted meanwhile: its folder (and the temp file) went to the trash
      await rename(temp, layout.assetFile(sessionId, ref.id, 'bin'));
      await writeFileAtomic(layout.assetFile(sessionId, ref.id, 'json'), JSON.stringify(ref)); // the asset exists from here on
      await removeLeftovers(sessions, sessionId);
    });
    return ref;
  } catch (error) {
    await rm(temp, { force: true });
    if (hasErrorCode(error, 'ENOENT'))
      throw new NotFoundError(
        `Session ${JSON.stringify(sessionId)} was deleted while its asset ${JSON.stringify(checked.name)} was uploaded.`,
        { cause: error },
      );
    throw error;
  }
}

/** `.bin` files without their `.json` (a crash between the two renames) and stale temp files. The caller holds the session lock. */
async function removeLeftovers(sessions: FileSessions, sessionId: string): Promise<void> {
  const dir = sessions.layout.assetsDir(sessionId);
  const names = new Set(await readDirNames(dir));
  for (const name of names) {
    if (name.endsWith('.bin') && !names.has(`${name.slice(0, -4)}.json`)) await rm(join(dir, name), { force: true });
    else if (name.startsWith('.') && name.endsWith('.tmp')) {
      // An upload's temp file, or a reference's (writeFileAtomic): possibly in flight now, so only stale ones.
      const info = await stat(join(dir, name)).catch(() => undefined);
      if (info !== undefined && Date.now() - info.mtimeMs > STALE_UPLOAD_MS) await rm(join(dir, name), { force: true });
    }
  }
}

/** The stored reference of an asset, or `undefined` when it has none. @throws {DocumentCorruptError} for a damaged one */
async function readRef(sessions: FileSessions, sessionId: string, assetId: string): Promise<AssetRef | undefined> {
  const path = sessions.layout.assetFile(sessionId, assetId, 'json');
  const raw = await readJsonFile(path);
  return raw === undefined ? undefined : parseStoredAssetRef(raw, path);
}

/** `FileStore.getAsset`: the reference, then the bytes, checked against its size and SHA-256. */
export async function getAsset(
  sessions: FileSessions,
  sessionId: string,
  assetId: string,
  scope: TenantScope,
): Promise<StoredAsset | undefined> {
  assertSessionId(sessionId);
  assertValidId('asset', assetId);
  await requireStoredSession(sessions, sessionId, scope);
  const ref = await readRef(sessions, sessionId, assetId);
  if (ref === undefined) return undefined;
  const path = sessions.layout.assetFile(sessionId, assetId, 'bin');
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    // Deleted between the two reads; a reference whose bytes are missing is damage.
    if (hasErrorCode(error, 'ENOENT') && (await readRef(sessions, sessionId, assetId)) === undefined) return undefined;
    if (!hasErrorCode(error, 'ENOENT')) throw error;
    bytes = Buffer.alloc(0);
  }
  verifyAssetBytes(ref, bytes, path);
  return { ref, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/** `FileStore.listAssets`: every reference in the folder, oldest first; a damaged one is left out (its `getAsset` throws). */
export async function listAssets(sessions: FileSessions, sessionId: string, scope: TenantScope): Promise<AssetRef[]> {
  assertSessionId(sessionId);
  await requireStoredSession(sessions, sessionId, scope);
  const ids = (await readDirNames(sessions.layout.assetsDir(sessionId)))
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .map((n) => n.slice(0, -5));
  const refs = await mapInBatches(ids, (id) => readRef(sessions, sessionId, id).catch(() => undefined));
  return refs
    .filter((ref): ref is AssetRef => ref !== undefined)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** `FileStore.deleteAsset`: under the session lock, the reference first (the asset is gone), then the bytes. */
export async function deleteAsset(
  sessions: FileSessions,
  sessionId: string,
  assetId: string,
  scope: TenantScope,
): Promise<boolean> {
  assertSessionId(sessionId);
  assertValidId('asset', assetId);
  assertTenantScope(scope);
  return sessions.locks.run(sessionId, async () => {
    await requireStoredSession(sessions, sessionId, scope);
    const refPath = sessions.layout.assetFile(sessionId, assetId, 'json');
    const existed = await stat(refPath).then(
      () => true,
      (error: unknown) => (hasErrorCode(error, 'ENOENT') ? false : Promise.reject(error)),
    );
    await rm(refPath, { force: true });
    await rm(sessions.layout.assetFile(sessionId, assetId, 'bin'), { force: true });
    if (existed) await fsyncDir(sessions.layout.assetsDir(sessionId));
    return existed;
  });
}

/** How many assets session `sessionId` holds (for `eraseUser`'s counts); the caller holds its lock. */
export async function countAssets(sessions: FileSessions, sessionId: string): Promise<number> {
  return (await readDirNames(sessions.layout.assetsDir(sessionId))).filter(
    (n) => n.endsWith('.json') && !n.startsWith('.'),
  ).length;
}
