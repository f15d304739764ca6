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
