import { type AssetRef, type PutAssetInput, sessionAssets } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import type { Principal } from './auth.js';
import { HttpError } from './errors.js';
import type { ChatFilePart } from './schemas.js';
import { scopeOf } from './sessionAccess.js';

/** The assets of a `useChat` message's file parts, and how to take back the ones this call stored. */
export interface ChatFileAssets {
  /** The message's assets, in the order of its file parts; `undefined` when it has none. */
  assets: AssetRef[] | undefined;
  /** Deletes the assets stored for this message (its `data:` URLs), for a turn refused after storing them. */
  discard(): Promise<void>;
}

/** Where the chat request came in, to know this server's own asset URLs. */
export interface ChatRequestPlace {
  /** The request's URL (`c.req.url`). */
  url: string;
  /** The request's path as routed (`c.req.path`), ending in `/sessions/:id/chat`. */
  path: string;
}

/**
 * The assets of a `useChat` message's file parts (AI SDK v5 `FileUIPart`s): a `data:` URL is
 * decoded and stored as a new asset of the session (named by `filename`, else `file-<part index>`,
 * typed by `mediaType`); a URL of this server's `GET /sessions/:id/assets/:assetId` for this session
 * (relative, or absolute on the request's host) is that existing asset. Every part is checked before
 * anything is stored, so a refused message stores nothing; remote URLs are never fetched.
 *
 * @param maxBytes the largest decoded file, in bytes (the upload route's `maxAssetBytes`)
 * @throws {HttpError} `UNSUPPORTED_FILE_URL` (400) for any other URL; `INVALID_FILE_URL` (400) for a
 *   malformed `data:` URL; `ASSET_TOO_LARGE` (413) past `maxBytes`; `NOT_FOUND` (404) for an asset URL
 *   the session has no asset of; the store's `InvalidInputError` / `AssetTooLargeError` otherwise
 * @example
 * ```ts
 * const { assets, discard } = await chatFileAssets(workflow, c.var.principal, session.id, files, c.req, 25 << 20);
 * ```
 */
export async function chatFileAssets(
  workflow: HandoffWorkflow,
  principal: Principal,
  sessionId: string,
  files: readonly ChatFilePart[],
  place: ChatRequestPlace,
  maxBytes: number,
): Promise<ChatFileAssets> {
  const stored: string[] = [];
  const store = sessionAssets(workflow.config.store, sessionId, scopeOf(principal));
  const discard = async () => {
    for (const id of stored.splice(0)) await store.delete(id);
  };
  if (files.length === 0) return { assets: undefined, discard };

  const known = new Map((await store.list()).map((ref) => [ref.id, ref]));
  const assetPath = `${place.path.replace(/\/sessions\/[^/]+\/chat\/?$/, '')}/sessions/`;
  // First every part is checked and decoded; only then is anything stored.
  const planned: (AssetRef | PutAssetInput)[] = [];
  for (const file of files) {
    if (file.url.startsWith('data:')) {
      const bytes = await decodeDataUrl(file);
      if (bytes.byteLength > maxBytes)
        throw new HttpError(
          413,
          'ASSET_TOO_LARGE',
          `${partName(file)} is ${bytes.byteLength} bytes, larger than the ${maxBytes} bytes this server accepts.`,
        );
      planned.push({ name: file.filename ?? `file-${file.index}`, contentType: file.mediaType, bytes });
      continue;
    }
    const assetId = ownAssetId(file.url, place.url, assetPath, sessionId);
    if (assetId === undefined)
      throw new HttpError(
        400,
        'UNSUPPORTED_FILE_URL',
        `${partName(file)} has the URL ${JSON.stringify(file.url.slice(0, 200))}, which this server does not ` +
          'fetch: send the file as a data: URL, or upload it with POST /sessions/:id/assets and send its ' +
          'GET /sessions/:id/assets/:assetId URL.',
      );
    const ref = known.get(assetId);
    if (ref === undefined)
      throw new HttpError(
        404,
        'NOT_FOUND',
        `${partName(file)} names asset ${JSON.stringify(assetId)}, which session ${JSON.stringify(sessionId)} ` +
          'does not have; see GET /sessions/:id/assets.',
      );
    planned.push(ref);
  }
  const assets: AssetRef[] = [];
  try {
    for (const item of planned) {
      if ('id' in item) {
        assets.push(item);
        continue;
      }
      const ref = await store.put(item);
      stored.push(ref.id);
      assets.push(ref);
    }
  } catch (error) {
    await discard();
    throw error;
  }
  return { assets, discard };
}

/** How an error names a file part. */
function partName(file: ChatFilePart): string {
  const name = file.filename === undefined ? '' : ` (${JSON.stringify(file.filename)})`;
  return `The file part at messages[-1].parts[${file.index}]${name}`;
}

/** The bytes of a `data:` URL, decoded by the platform's WHATWG fetch (a data: URL never reaches the network). */
async function decodeDataUrl(file: ChatFilePart): Promise<Uint8Array> {
  try {
    const response = await fetch(file.url);
    return new Uint8Array(await response.arrayBuffer());
  } catch {
    throw new HttpError(
      400,
      'INVALID_FILE_URL',
      `${partName(file)} has a malformed data: URL; send data:<media type>;base64,<the file in base64>.`,
    );
  }
}

/** The asset id of a URL of this server's asset route for the session, or `undefined` for any other URL. */
function ownAssetId(url: string, requestUrl: string, assetPath: string, sessionId: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url, requestUrl);
  } catch {
    return undefined;
  }
  // Behind a TLS-terminating proxy the scheme differs, so the host alone says "this server".
  if (parsed.host !== new URL(requestUrl).host || !['http:', 'https:'].includes(parsed.protocol)) return undefined;
  if (!parsed.pathname.startsWith(assetPath)) return undefined;
  const match = /^([^/]+)\/assets\/([^/]+)$/.exec(parsed.pathname.slice(assetPath.length));
  if (match === null) return undefined;
  try {
    return decodeURIComponent(match[1]!) === sessionId ? decodeURIComponent(match[2]!) : undefined;
  } catch {
    return undefined;
  }
}
