/**
 * MongoStore's asset operations: files uploaded to a session, stored in GridFS's format in the
 * bucket `<prefix>assets` (collections `<prefix>assets.files` and `<prefix>assets.chunks`), so any
 * GridFS reader (the driver's `GridFSBucket`, `mongofiles`) can open them by `_id`.
 *
 * The documents are written by this module rather than by `GridFSBucket`, for three reasons: each
 * chunk carries its session's `sessionId` and `tenantId` (every command names both, as on the other
 * collections, so `assets.chunks` can be sharded on `{ sessionId: 'hashed' }` and a tenant's data
 * found by its field); the `_id`s are deterministic strings (`<sessionId>/<assetId>/<n>`), so no
 * BSON value of this package's driver copy reaches an app's client of another major version; and
 * the files document is inserted once, after every chunk, with the size and SHA-256 in it, so an
 * upload that fails or crashes leaves no asset listed (only chunks, removed with the session).
 */
import {
  type AssetRef,
  assertValidId,
  createId,
  NotFoundError,
  type PutAssetInput,
  type StoredAsset,
  type TenantScope,
} from '@baton/core';
import {
  AssetMeter,
  assertSessionId,
  checkAssetInput,
  parseStoredAssetRef,
  verifyAssetBytes,
} from '@baton/core/store-kit';
import type { Filter } from 'mongodb';
import type { AssetChunkDoc, AssetFileDoc } from '../collections/mongoCollections.js';
import type { MongoContext } from '../collections/mongoContext.js';
import { misplacedDocument } from '../collections/mongoErrors.js';
import { requireTenant, tenantField } from './sessionTenants.js';

/** GridFS's default chunk size (255 KiB), in bytes. */
export const ASSET_CHUNK_BYTES = 255 * 1024;
/** Chunks per `insertMany` (about 4 MiB, well under a command's 48 MB). */
const CHUNKS_PER_INSERT = 16;

/** The `_id` of an asset's files document (and its chunks' `files_id`). */
function fileKey(sessionId: string, assetId: string): string {
  return `${sessionId}/${assetId}`;
}

/** A chunk's bytes as a `Uint8Array`, whichever `bson` copy read it (a `Binary` by shape). */
function chunkBytes(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  const binary = data as { value?: () => Uint8Array } | null;
  if (binary !== null && typeof binary?.value === 'function') return binary.value();
  return new Uint8Array(0); // not bytes at all: the SHA-256 check names the asset as damaged
}

/**
 * `MongoStore.putAsset`: the chunks in batches of {@link CHUNKS_PER_INSERT}, then the files document
 * (the asset exists from here on), then a check that the session was not deleted meanwhile.
 */
export async function putAsset(
  context: MongoContext,
  sessionId: string,
  input: PutAssetInput,
  scope: TenantScope | undefined,
  maxBytes: number,
): Promise<AssetRef> {
  assertSessionId(sessionId);
  const tenant = await requireTenant(context, sessionId, scope);
  const meter = new AssetMeter(checkAssetInput(input), maxBytes);
  const { assetFiles, assetChunks, sessions } = context.collections;
  const assetId = createId();
  const fileId = fileKey(sessionId, assetId);
  const owner = { sessionId, ...tenantField(tenant) };
  let stored = false;
  try {
    let n = 0;
    let batch: AssetChunkDoc[] = [];
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    const cut = (data: Uint8Array) => {
      batch.push({ _id: `${fileId}/${n}`, files_id: fileId, n, data, ...owner });
      n += 1;
    };
    const flush = async () => {
      if (batch.length > 0) await assetChunks.insertMany(batch, { ordered: true });
      batch = [];
    };
    for await (const chunk of meter.chunks()) {
      held.push(chunk);
      heldBytes += chunk.byteLength;
      if (heldBytes < ASSET_CHUNK_BYTES) continue;
      const all = Buffer.concat(held); // a copy: the caller may reuse its buffers
      let at = 0;
      for (; at + ASSET_CHUNK_BYTES <= all.length; at += ASSET_CHUNK_BYTES)
        cut(all.subarray(at, at + ASSET_CHUNK_BYTES));
      held = at < all.length ? [all.subarray(at)] : [];
      heldBytes = all.length - at;
      if (batch.length >= CHUNKS_PER_INSERT) await flush();
    }
    if (heldBytes > 0) cut(Buffer.concat(held));
    await flush();
    const ref = meter.ref(sessionId, assetId);
    await assetFiles.insertOne({
      _id: fileId,
      length: ref.size,
      chunkSize: ASSET_CHUNK_BYTES,
      uploadDate: new Date(ref.createdAt),
      filename: ref.name,
      metadata: ref,
      ...owner,
    });
    stored = true;
    // deleteSession removes assets before and after the session document: one inserted in between is found here.
    if ((await sessions.findOne({ _id: sessionId, ...tenant }, { projection: { _id: 1 } })) === null) {
      context.tenants.forget(sessionId);
      throw new NotFoundError(
        `Session ${JSON.stringify(sessionId)} was deleted while its asset ${JSON.stringify(ref.name)} was uploaded.`,
      );
    }
    return ref;
  } catch (error) {
    // Best effort (the connection may be gone): what is left is unlisted chunks, removed with the session.
    await removeAsset(context, sessionId, fileId, tenant, stored).catch(() => undefined);
    throw error;
  }
}

/** Deletes an asset's files document (first: the asset is gone), then its chunks. */
async function removeAsset(
  context: MongoContext,
  sessionId: string,
  fileId: string,
  tenant: Filter<AssetFileDoc>,
  withFile = true,
): Promise<boolean> {
  const { assetFiles, assetChunks } = context.collections;
  const removed = withFile
    ? (await assetFiles.deleteOne({ _id: fileId, sessionId, ...tenant })).deletedCount > 0
    : false;
  await assetChunks.deleteMany({ files_id: fileId, sessionId, ...(tenant as Filter<AssetChunkDoc>) });
  return removed;
}

/** `MongoStore.getAsset`: the files document, then its chunks in order, checked against the size and SHA-256. */
export async function getAsset(
  context: MongoContext,
  sessionId: string,
  assetId: string,
  scope: TenantScope | undefined,
): Promise<StoredAsset | undefined> {
  assertSessionId(sessionId);
  assertValidId('asset', assetId);
  const tenant = await requireTenant(context, sessionId, scope);
  const fileId = fileKey(sessionId, assetId);
  const file = await context.collections.assetFiles.findOne({ _id: fileId, sessionId, ...tenant });
  if (file === null) return undefined;
  const ref = toAssetRef(file);
  const chunks = await context.collections.assetChunks
    .find({ files_id: fileId, sessionId, ...tenant })
    .sort({ n: 1 })
    .toArray();
  const bytes = Buffer.concat(chunks.map((chunk) => chunkBytes(chunk.data)));
  verifyAssetBytes(ref, bytes, `asset document ${JSON.stringify(fileId)}`);
  return { ref, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/** An asset's reference from its files document, as strictly as it was written. @throws {DocumentCorruptError} */
function toAssetRef(file: AssetFileDoc): AssetRef {
  const document = `asset document ${JSON.stringify(file._id)}`;
  const ref = parseStoredAssetRef(file.metadata, document);
  if (file._id !== fileKey(ref.sessionId, ref.id)) throw misplacedDocument(document, 'metadata.id', ref.id);
  return ref;
}

/** `MongoStore.listAssets`: one query on the files documents, oldest first. */
export async function listAssets(
  context: MongoContext,
  sessionId: string,
  scope: TenantScope | undefined,
): Promise<AssetRef[]> {
  assertSessionId(sessionId);
  const tenant = await requireTenant(context, sessionId, scope);
  const files = await context.collections.assetFiles
    .find({ sessionId, ...tenant })
    .sort({ uploadDate: 1, _id: 1 })
    .toArray();
  return files.map(toAssetRef);
}

/** `MongoStore.deleteAsset`: the files document, then the chunks. */
export async function deleteAsset(
  context: MongoContext,
  sessionId: string,
  assetId: string,
  scope: TenantScope | undefined,
): Promise<boolean> {
  assertSessionId(sessionId);
  assertValidId('asset', assetId);
  const tenant = await requireTenant(context, sessionId, scope);
  return removeAsset(context, sessionId, fileKey(sessionId, assetId), tenant);
}

/**
 * Deletes every asset of the sessions `ids` (files documents, then all their chunks, those of
 * unfinished uploads included); every delete names the session ids and the call's tenant fragment.
 * @returns how many assets (files documents) were deleted
 */
export async function deleteSessionAssets(
  context: MongoContext,
  ids: readonly string[],
  tenant: { tenantId?: unknown },
): Promise<number> {
  const bySession = { sessionId: { $in: [...ids] }, ...(tenant as { tenantId?: string }) };
  const files = await context.collections.assetFiles.deleteMany(bySession);
  await context.collections.assetChunks.deleteMany(bySession);
  return files.deletedCount;
}
