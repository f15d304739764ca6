import { bodyLimit } from 'hono/body-limit';
import { ASSET_UPLOAD_PATH } from './assetRoutes.js';
import type { Authenticate, Principal } from './auth.js';
import { errorResponse } from './errorResponse.js';
import { HttpError } from './errors.js';
import type { BatonHono } from './routeContext.js';

/** The path of a `useChat` turn, whose body may carry a file as a `data:` URL. */
const CHAT_PATH = /^\/sessions\/[^/]+\/chat\/?$/;

/**
 * The middleware every route runs behind: errors as `{ error: { code, message } }` with their
 * status, the JSON body limit (413 past `maxBodyBytes`; asset uploads have their own, and a `useChat`
 * body may also carry one `maxAssetBytes` file as a base64 `data:` URL), and the auth hook (401 when
 * it refuses; no hook: every request is anonymous).
 *
 * @example
 * ```ts
 * registerMiddleware(app, { maxBodyBytes: 1 << 20, maxAssetBytes: 25 << 20, authenticate });
 * ```
 */
export function registerMiddleware(
  app: BatonHono,
  options: { maxBodyBytes: number; maxAssetBytes: number; authenticate?: Authenticate | undefined },
): void {
  app.onError((error, c) => {
    const { status, body } = errorResponse(error);
    if (status === 500) console.error('[baton/server]', error);
    return c.json(body, status as 400);
  });
  const jsonBodyLimit = bodyLimit({
    maxSize: options.maxBodyBytes,
    onError: () => {
      throw new HttpError(413, 'BODY_TOO_LARGE', `The request body is larger than ${options.maxBodyBytes} bytes.`);
    },
  });
  const chatBodyBytes = options.maxBodyBytes + Math.ceil(options.maxAssetBytes / 3) * 4;
  const chatBodyLimit = bodyLimit({
    maxSize: chatBodyBytes,
    onError: () => {
      throw new HttpError(413, 'BODY_TOO_LARGE', `The chat request body is larger than ${chatBodyBytes} bytes.`);
    },
  });
  // An asset upload is limited by its own route (maxAssetBytes), not by the JSON bodies' limit.
  app.use('*', (c, next) => {
    if (c.req.method !== 'POST') return jsonBodyLimit(c, next);
    if (ASSET_UPLOAD_PATH.test(c.req.path)) return next();
    return (CHAT_PATH.test(c.req.path) ? chatBodyLimit : jsonBodyLimit)(c, next);
  });
  app.use('*', async (c, next) => {
    let principal: Principal | undefined;
    try {
      principal = options.authenticate === undefined ? {} : await options.authenticate(c.req.raw);
    } catch {
      principal = undefined;
    }
    if (principal === undefined)
      throw new HttpError(401, 'UNAUTHENTICATED', 'The request carries no credentials the server accepts.');
    c.set('principal', principal);
    await next();
  });
}
