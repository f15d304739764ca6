import type { HandoffWorkflow, SessionRunner } from '@baton/handoff';
import { Hono } from 'hono';
import { DEFAULT_MAX_ASSET_UPLOAD_BYTES, registerAssetRoutes } from './http/assetRoutes.js';
import type { Authenticate } from './http/auth.js';
import { registerEventRoutes } from './http/eventRoutes.js';
import { registerMiddleware } from './http/middleware.js';
import { type BatonEnv, createRouteContext } from './http/routeContext.js';
import { registerSessionRoutes } from './http/sessionRoutes.js';
import { registerTurnRoutes } from './http/turnRoutes.js';
import { reconcileEvery } from './replicas/resumeCutTurns.js';
import { TurnRuns, type TurnRunsOptions } from './streaming/turnRuns.js';

/** Options of {@link createBatonApp}. */
export interface BatonAppOptions {
  /** The workflow whose sessions the API serves (its store keeps them). */
  workflow: HandoffWorkflow;
  /**
   * The auth hook (see {@link Authenticate}). Without one every request is anonymous: no tenant,
   * no user, so every client reaches every session without a tenant. Give one in production.
   */
  authenticate?: Authenticate;
  /** How much of each branch's events the server keeps for reconnecting clients (see {@link TurnRunsOptions}). */
  events?: TurnRunsOptions;
  /**
   * Largest request body in bytes (default 1 MiB); larger ones get 413. Asset uploads have their own
   * limit; a `/chat` body may also hold one `maxAssetBytes` file in base64.
   */
  maxBodyBytes?: number;
  /**
   * Largest asset upload (`POST /sessions/:id/assets`, or a `/chat` file's `data:` URL decoded) in bytes
   * (default 25 MiB); larger ones get 413. The store's `maxAssetBytes` applies too.
   */
  maxAssetBytes?: number;
  /** Milliseconds between SSE keep-alive comments (default 15,000). */
  keepAliveMs?: number;
  /**
   * Finish turns cut by a dead replica ({@link resumeCutTurns}) on start and then every `intervalMs`
   * (default 5,000), for leases expired at least `olderThanMs` ago (default 0). Needs a store with
   * branch leases (the built-in stores have them). A client following a cut turn then waits for the
   * takeover (`events.cutTurnWaitMs`, default `olderThanMs + intervalMs + 1000`).
   */
  reconcile?: { intervalMs?: number; olderThanMs?: number };
  /**
   * Where the turns of `POST /sessions/:id/messages`, `/chat`, `/requests/:requestId` and `/close` run
   * (see {@link SessionRunner}): in this process by default (`inProcessRunner`), or on Temporal
   * workers with `temporalRunner(sessions)` from `@baton/temporal`. With a runner that runs turns
   * elsewhere, the server still opens each session from `workflow`'s store (access, 404, 409 while a
   * turn runs: it holds the branch's lease while it awaits the turn) and relays the turn's events as
   * the runner gives them (committed messages, requests, the end; no `message.delta`).
   */
  runner?: SessionRunner;
}

/**
 * An HTTP API over a handoff workflow, as a Hono app (Web-standard `Request`/`Response`: serve it
 * with `serveBaton` from `@baton/server/node`, or with any runtime Hono runs on). Routes, all JSON
 * unless streamed; errors are `{ error: { code, message, issues? } }` with the statuses of
 * {@link STATUS_OF_CODE} (bad body 400, unknown session 404, lost race or running turn 409, closed session 410):
 *
 * - `POST /sessions` `{ id?, metadata? }` → 201 the session (the server makes an id when none is given)
 * - `GET /sessions/:id?branch=` → the session, its routing state and pending requests (while a turn
 *   runs on the branch: `routingState: 'running'`, `running: true`, no pending requests)
 * - `GET /sessions/:id/messages?branch=&fromSeq=` → `{ messages }`
 * - `POST /sessions/:id/messages?branch=` `{ text, assets? }` → the turn as Server-Sent Events, or with
 *   `Accept: application/json` the awaited `TurnResult` (`assets`: ids of the session's assets the message refers to)
 * - `POST /sessions/:id/assets?name=` with a file as the body (its type as `Content-Type`) → 201 the
 *   `AssetRef`; `GET /sessions/:id/assets` → `{ assets }`; `GET /sessions/:id/assets/:assetId` → the
 *   file; `DELETE /sessions/:id/assets/:assetId` → 204 (too large 413, unknown 404)
 * - `POST /sessions/:id/requests/:requestId?branch=` `{ text }` | `{ approved, reason?, always? }` | `{ reply }` |
 *   `{ handoff, reason? }` → the turn, as above (`always: 'session'`: "always allow" the tool in this session)
 * - `DELETE /sessions/:id/approval-grants/:toolName?branch=` → `{ revoked, approvalGrants }`: the tool asks
 *   again (the session's grants are `approvalGrants` in every session view)
 * - `POST /sessions/:id/close` `{ reason? }` → the session
 * - `GET /sessions/:id/timeline?branch=` → what happened on the branch, in order (`sessionTimeline`'s
 *   result), plus `text`, the same told as `baton inspect` prints it (`formatTimeline`)
 * - `GET /sessions/:id/branches` → `{ branches }`; `POST /sessions/:id/fork?branch=` `{ branchId, atSeq }` → 201 the new branch
 * - `POST /sessions/:id/chat?branch=` with the body `useChat` sends → the turn in the Vercel AI SDK's UI
 *   message stream protocol (see {@link UIMessageChunker}); the last message's file parts are its assets
 *   (a `data:` URL stored as a new asset, or this session's asset URL; other URLs 400 `UNSUPPORTED_FILE_URL`)
 * - `GET /sessions/:id/events?branch=&follow=` with `Last-Event-ID` (or `?lastEventId=`) → what the
 *   client missed, then the live rest of the running turn (and, with `follow=true`, of later turns)
 *
 * @example
 * ```ts
 * import { createBatonApp } from '@baton/server';
 * import { serveBaton } from '@baton/server/node';
 * const app = createBatonApp({ workflow: desk, authenticate: (request) => tenants.get(request.headers.get('authorization') ?? '') });
 * const server = await serveBaton(app, { port: 8787 });
 * ```
 */
export function createBatonApp(options: BatonAppOptions): Hono<BatonEnv> {
  const { workflow } = options;
  const app = new Hono<BatonEnv>();
  const maxAssetBytes = options.maxAssetBytes ?? DEFAULT_MAX_ASSET_UPLOAD_BYTES;
  registerMiddleware(app, {
    maxBodyBytes: options.maxBodyBytes ?? 1 << 20,
    maxAssetBytes,
    authenticate: options.authenticate,
  });
  const reconcile = options.reconcile && {
    intervalMs: options.reconcile.intervalMs ?? 5000,
    olderThanMs: options.reconcile.olderThanMs ?? 0,
  };
  // With a reconciler, a client following a cut turn waits for its takeover (by this replica or another).
  const cutTurnWaitMs = reconcile === undefined ? 0 : reconcile.olderThanMs + reconcile.intervalMs + 1000;
  const runs = new TurnRuns({ cutTurnWaitMs, ...options.events }, workflow.config.store);
  const routes = createRouteContext(workflow, runs, options.keepAliveMs ?? 15_000, options.runner);
  if (reconcile !== undefined)
    reconcileEvery({ workflow, runs, olderThan: reconcile.olderThanMs }, reconcile.intervalMs);
  // Route groups, one file each under http/; a new group is one more line here.
  registerSessionRoutes(app, routes);
  registerTurnRoutes(app, routes, maxAssetBytes);
  registerEventRoutes(app, routes);
  registerAssetRoutes(app, workflow, maxAssetBytes);
  return app;
}
