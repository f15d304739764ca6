import { ConfigurationError } from '../../errors.js';
import { assertMaxAssetBytes } from '../assets/assetInput.js';
import type { AssetLimits } from './inMemoryAssets.js';
import type { SessionLimits } from './inMemoryRecords.js';

/** Options of `InMemoryStore` (`new InMemoryStore(options)`). */
export interface InMemoryStoreOptions {
  /**
   * Sessions the store holds before it makes room for a new one by removing closed or idle ones
   * (least recently used first). Default: unlimited. `HandoffBuilder`'s default store uses 10,000.
   */
  maxSessions?: number;
  /** How long a session must go unread and unwritten before it counts as idle and may be removed to make room, in ms (default 1 hour). */
  idleTtlMs?: number;
  /** The largest asset `putAsset` accepts, in bytes (default 25 MiB); larger ones throw `AssetTooLargeError`. */
  maxAssetBytes?: number;
  /** All sessions' assets together, in bytes (default 256 MiB): an upload past it throws `AssetTooLargeError`. */
  maxAssetBytesTotal?: number;
}

/**
 * The session limits of `options` with their defaults (unlimited sessions, idle after 1 hour).
 * @throws {ConfigurationError} for a `maxSessions` or `idleTtlMs` that is not a positive number
 */
export function sessionLimits(options: InMemoryStoreOptions): SessionLimits {
  const maxSessions = options.maxSessions ?? Number.POSITIVE_INFINITY;
  const idleTtlMs = options.idleTtlMs ?? 60 * 60_000;
  if (!(maxSessions > 0) || !(idleTtlMs > 0)) {
    throw new ConfigurationError(
      `InMemoryStore needs a positive maxSessions and idleTtlMs, got ${JSON.stringify({ maxSessions: options.maxSessions, idleTtlMs: options.idleTtlMs })}.`,
    );
  }
  return { maxSessions, idleTtlMs };
}

/**
 * The asset limits of `options` with their defaults (25 MiB each, 256 MiB together).
 * @throws {ConfigurationError} for limits that are not positive whole numbers of bytes
 */
export function assetLimits(options: InMemoryStoreOptions): AssetLimits {
  const maxAssetBytes = assertMaxAssetBytes('InMemoryStore', options.maxAssetBytes);
  const maxAssetBytesTotal = options.maxAssetBytesTotal ?? Math.max(256 * 1024 * 1024, maxAssetBytes);
  if (!Number.isSafeInteger(maxAssetBytesTotal) || maxAssetBytesTotal <= 0) {
    throw new ConfigurationError(
      `InMemoryStore needs maxAssetBytesTotal as a positive whole number of bytes, got ${JSON.stringify(options.maxAssetBytesTotal)}.`,
    );
  }
  return { maxAssetBytes, maxAssetBytesTotal };
}
