import type { AssetRef } from '../../conversation/asset.js';
import { ConfigurationError } from '../../errors.js';
import type { AssetStore, PutAssetInput, Store, StoredAsset, TenantScope } from '../store.js';

/**
 * The assets of one session, bound to its store and tenant: what a tool sees as `context.assets`
 * and a handoff session as `session.assets`. Each call is the store's call of the same name.
 *
 * @example
 * ```ts
 * const ref = await session.assets.put({ name: 'receipt.png', contentType: 'image/png', bytes });
 * const stored = await session.assets.get(ref.id); // { ref, bytes }
 * ```
 */
export interface SessionAssets {
  /** Stores a new asset (see `AssetStore.putAsset`). @throws {AssetTooLargeError} past the store's limit; {@link InvalidInputError} for bad input */
  put(input: PutAssetInput): Promise<AssetRef>;
  /** The asset's reference and bytes, or `undefined` (see `AssetStore.getAsset`). @throws {InvalidIdError} for an unsafe id */
  get(assetId: string): Promise<StoredAsset | undefined>;
  /** The session's assets, oldest first. */
  list(): Promise<AssetRef[]>;
  /** Deletes one asset; whether it existed. @throws {InvalidIdError} for an unsafe id */
  delete(assetId: string): Promise<boolean>;
}

/**
 * Whether `store` has the asset capability (`putAsset`, `getAsset`, `listAssets`, `deleteAsset`).
 * @example
 * ```ts
 * if (hasAssets(store)) await store.listAssets('chat-1');
 * ```
 */
export function hasAssets(store: Store): store is Store & AssetStore {
  return (
    typeof store.putAsset === 'function' &&
    typeof store.getAsset === 'function' &&
    typeof store.listAssets === 'function' &&
    typeof store.deleteAsset === 'function'
  );
}

/**
 * The assets of session `sessionId` of `store`, in the scope's tenant.
 *
 * @param store a store with the asset capability (the built-in stores have it)
 * @param sessionId the session
 * @param scope the session's tenant
 * @throws {ConfigurationError} when the store has no asset capability
 * @example
 * ```ts
 * const assets = sessionAssets(store, 'chat-1', { tenantId: 'acme' });
 * const refs = await assets.list();
 * ```
 */
export function sessionAssets(store: Store, sessionId: string, scope: TenantScope = {}): SessionAssets {
  if (!hasAssets(store)) {
    throw new ConfigurationError(
      `The ${store.kind} store keeps no assets (it has no putAsset, getAsset, listAssets, deleteAsset); use InMemoryStore, FileStore or MongoStore, or add them.`,
    );
  }
  return {
    put: (input) => store.putAsset(sessionId, input, scope),
    get: (assetId) => store.getAsset(sessionId, assetId, scope),
    list: () => store.listAssets(sessionId, scope),
    delete: (assetId) => store.deleteAsset(sessionId, assetId, scope),
  };
}
