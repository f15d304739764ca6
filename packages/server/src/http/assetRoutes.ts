import { type AssetRef, InvalidInputError, sessionAssets } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import { create as contentDisposition } from 'content-disposition';
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Principal } from './auth.js';
import { HttpError } from './errors.js';
import { scopeOf, sessionDocument } from './sessionAccess.js';

/** The default largest upload the asset route reads, in bytes (the store's `maxAssetBytes` applies too). */
export const DEFAULT_MAX_ASSET_UPLOAD_BYTES = 25 * 1024 * 1024;

/** The path of an upload, which has its own body limit instead of the JSON routes' one. */
export const ASSET_UPLOAD_PATH = /^\/sessions\/[^/]+\/assets\/?$/;

type Env = { Variables: { principal: Principal } };

/** The assets of a session the principal owns. @throws {NotFoundError} for another tenant's or user's session */
async function assetsOf(workflow: HandoffWorkflow, c: Context<Env>) {
  const id = c.req.param('id')!;
  await sessionDocument(workflow, c.var.principal, id);
  return sessionAssets(workflow.config.store, id, scopeOf(c.var.principal));
}

/**
 * The asset routes of `createBatonApp`:
 *
 * - `POST /sessions/:id/assets?name=<file name>` with the file as the body and its type as
 *   `Content-Type` → 201 the `AssetRef` (the body is streamed to the store; past `maxBytes` 413)
 * - `GET /sessions/:id/assets` → `{ assets }`, oldest first
 * - `GET /sessions/:id/assets/:assetId` → the bytes, with the asset's `Content-Type` and a
 *   `Content-Disposition: attachment` naming the file
 * - `DELETE /sessions/:id/assets/:assetId` → 204, or 404 when there is no such asset
 *
 * @param app the app to add them to (its auth middleware sets the principal)
 * @param workflow whose store keeps the assets
 * @param maxBytes the largest upload, in bytes
 * @example
 * ```ts
 * registerAssetRoutes(app, workflow, 10 * 1024 * 1024);
 * ```
 */
export function registerAssetRoutes(app: Hono<Env>, workflow: HandoffWorkflow, maxBytes: number): void {
  const tooLarge = () => {
    throw new HttpError(
      413,
      'ASSET_TOO_LARGE',
      `The uploaded file is larger than the ${maxBytes} bytes this server accepts.`,
    );
  };

  app.post('/sessions/:id/assets', bodyLimit({ maxSize: maxBytes, onError: tooLarge }), async (c) => {
    const name = c.req.query('name');
    if (name === undefined || name === '') {
      throw new HttpError(
        400,
        'INVALID_QUERY',
        'Name the file in the query: POST /sessions/:id/assets?name=receipt.png, with the file as the body.',
      );
    }
    const contentType = c.req.header('content-type');
    if (contentType === undefined)
      throw new HttpError(
        400,
        'INVALID_BODY',
        `Send the file's type as Content-Type (e.g. image/png) with ${JSON.stringify(name)}.`,
      );
    const assets = await assetsOf(workflow, c);
    const body = c.req.raw.body;
    const ref = await assets.put(
      body === null ? { name, contentType, bytes: new Uint8Array(0) } : { name, contentType, stream: body },
    );
    return c.json(ref, 201);
  });

  app.get('/sessions/:id/assets', async (c) => {
    const assets = await assetsOf(workflow, c);
    return c.json({ assets: await assets.list() });
  });

  app.get('/sessions/:id/assets/:assetId', async (c) => {
    const assets = await assetsOf(workflow, c);
    const stored = await assets.get(c.req.param('assetId'));
    if (stored === undefined) throw notFound(c.req.param('assetId'));
    return new Response(stored.bytes as Uint8Array<ArrayBuffer>, {
      headers: {
        'content-type': stored.ref.contentType,
        'content-length': String(stored.bytes.byteLength),
        'content-disposition': contentDisposition(stored.ref.name),
        'x-content-type-options': 'nosniff',
      },
    });
  });

  app.delete('/sessions/:id/assets/:assetId', async (c) => {
    const assets = await assetsOf(workflow, c);
    if (!(await assets.delete(c.req.param('assetId')))) throw notFound(c.req.param('assetId'));
    return c.body(null, 204);
  });
}

function notFound(assetId: string): HttpError {
  return new HttpError(
    404,
    'NOT_FOUND',
    `The session has no asset ${JSON.stringify(assetId)}; see GET /sessions/:id/assets.`,
  );
}

/**
 * The asset references of a message's `assets` (ids of the session's assets, from the upload route).
 * @throws {InvalidInputError} naming an id the session has no asset of
 */
export async function assetRefsByIds(
  workflow: HandoffWorkflow,
  principal: Principal,
  sessionId: string,
  ids: readonly string[] | undefined,
): Promise<AssetRef[] | undefined> {
  if (ids === undefined || ids.length === 0) return undefined;
  const known = new Map(
    (await sessionAssets(workflow.config.store, sessionId, scopeOf(principal)).list()).map((ref) => [ref.id, ref]),
  );
  return ids.map((id) => {
    const ref = known.get(id);
    if (ref === undefined)
      throw new InvalidInputError(
        `Session ${JSON.stringify(sessionId)} has no asset ${JSON.stringify(id)}; upload it first with POST /sessions/:id/assets.`,
      );
    return ref;
  });
}
