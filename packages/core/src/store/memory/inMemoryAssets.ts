import type { AssetRef } from '../../conversation/asset.js';
import { AssetTooLargeError } from '../../errors.js';
import { assertValidId } from '../../ids.js';
import { type CheckedAssetInput, readWholeAsset } from '../assets/assetInput.js';
import { cloneData } from '../cloneData.js';
import type { StoredAsset } from '../store.js';
import type { SessionRecord } from './inMemoryRecords.js';

/** Limits of `InMemoryStore`'s assets, in bytes. */
export interface AssetLimits {
  /** The largest one asset. */
  maxAssetBytes: number;
  /** All assets of all sessions together. */
  maxAssetBytesTotal: number;
}

/** Bytes held by the assets of `sessions`. */
function heldBytes(sessions: Iterable<SessionRecord>): number {
  let total = 0;
  for (const record of sessions) for (const asset of record.assets?.values() ?? []) total += asset.bytes.byteLength;
  return total;
}

/**
 * `InMemoryStore.putAsset` on a found session: reads the content whole (a copy), within the per-asset
 * limit and the room left under the total, and keeps it in the session's record.
 * @throws {AssetTooLargeError} past either limit
 */
export async function putRecordAsset(
  record: SessionRecord,
  all: Iterable<SessionRecord>,
  input: CheckedAssetInput,
  limits: AssetLimits,
): Promise<AssetRef> {
  const room = Math.max(0, limits.maxAssetBytesTotal - heldBytes(all));
  const limit = Math.min(limits.maxAssetBytes, room);
  let read: Awaited<ReturnType<typeof readWholeAsset>>;
  try {
    read = await readWholeAsset(record.session.id, input, limit);
  } catch (error) {
    if (error instanceof AssetTooLargeError && limit < limits.maxAssetBytes) {
      throw new AssetTooLargeError(
        `Asset ${JSON.stringify(input.name)} does not fit: this InMemoryStore holds ${limits.maxAssetBytesTotal - room} of its ${limits.maxAssetBytesTotal} bytes of assets (maxAssetBytesTotal); delete assets or sessions, or raise the limit.`,
        limit,
      );
    }
    throw error;
  }
  record.assets ??= new Map();
  record.assets.set(read.ref.id, { ref: read.ref, bytes: read.bytes });
  return cloneData(read.ref);
}

/** `InMemoryStore.getAsset` on a found session: a copy of the reference and of the bytes. @throws {InvalidIdError} for an unsafe id */
export function getRecordAsset(record: SessionRecord, assetId: string): StoredAsset | undefined {
  const id = assertValidId('asset', assetId); // checked even when the session has no assets
  const found = record.assets?.get(id);
  return found && { ref: cloneData(found.ref), bytes: Uint8Array.from(found.bytes) };
}

/** `InMemoryStore.listAssets` on a found session: copies of the references, oldest first (insertion order). */
export function listRecordAssets(record: SessionRecord): AssetRef[] {
  return [...(record.assets?.values() ?? [])].map((asset) => cloneData(asset.ref));
}

/** `InMemoryStore.deleteAsset` on a found session. @throws {InvalidIdError} for an unsafe id */
export function deleteRecordAsset(record: SessionRecord, assetId: string): boolean {
  const id = assertValidId('asset', assetId);
  return record.assets?.delete(id) ?? false;
}
