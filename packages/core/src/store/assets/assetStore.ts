/** Assets, an optional capability of a `Store`: files uploaded to a session, stored by reference beside it. */
import type { AssetRef } from '../../conversation/asset.js';
import type { TenantScope } from '../store.js';

/**
 * What `putAsset` stores: the file's `name` as the user gave it (1-255 characters, no control
 * characters, no `/` or `\`), its MIME `contentType` (`type/subtype`, parameters allowed;
 * stored normalized), and its content, either all at once (`bytes`) or as a stream of chunks
 * (`stream`: a Node.js `Readable`, a web `ReadableStream`, any async iterable of bytes), exactly one.
 */
export interface PutAssetInput {
  name: string;
  contentType: string;
  bytes?: Uint8Array;
  stream?: AsyncIterable<Uint8Array>;
}

/** What `getAsset` returns: the reference and the bytes. */
export interface StoredAsset {
  ref: AssetRef;
  bytes: Uint8Array;
}

/**
 * Assets: files uploaded to a session (a receipt photo, a PDF), stored by reference beside the
 * session (never inside messages or checkpoints) and removed with it by `deleteSession`,
 * `deleteInactiveSessions` and `eraseUser`. An optional capability of a {@link Store}; the three
 * built-in stores have it. Every call is scoped to the session's tenant (see {@link TenantScope}):
 * another tenant's session is a {@link NotFoundError}, another tenant's asset does not exist.
 */
export interface AssetStore {
  /**
   * Stores a new asset of the session and returns its reference (a fresh `id`, `size` in bytes, the
   * SHA-256 of the bytes). All or nothing: a failed or refused upload (too large, the session
   * deleted meanwhile, a crash) leaves no asset listed.
   * @throws {AssetTooLargeError} past the store's `maxAssetBytes`; {@link InvalidInputError} for a bad
   *   name, content type or content; {@link NotFoundError} when the session (of this tenant) does not exist
   * @example
   * ```ts
   * const ref = await store.putAsset!('chat-1', { name: 'receipt.png', contentType: 'image/png', bytes }, { tenantId: 'acme' });
   * ```
   */
  putAsset(sessionId: string, input: PutAssetInput, scope?: TenantScope): Promise<AssetRef>;
  /**
   * The asset's reference and bytes; `undefined` when it does not exist (in this session of this tenant).
   * @throws {InvalidIdError} for an unsafe id; {@link NotFoundError} when the session (of this tenant)
   *   does not exist; {@link DocumentCorruptError} when the stored bytes no longer match their SHA-256
   */
  getAsset(sessionId: string, assetId: string, scope?: TenantScope): Promise<StoredAsset | undefined>;
  /**
   * The session's assets, oldest first.
   * @throws {NotFoundError} when the session (of this tenant) does not exist
   */
  listAssets(sessionId: string, scope?: TenantScope): Promise<AssetRef[]>;
  /**
   * Deletes one asset. Returns whether it existed. Messages that refer to it keep their reference.
   * @throws {InvalidIdError} for an unsafe id; {@link NotFoundError} when the session (of this tenant) does not exist
   */
  deleteAsset(sessionId: string, assetId: string, scope?: TenantScope): Promise<boolean>;
}
