/**
 * @baton/server: an HTTP API over a handoff workflow (Hono): sessions, turns streamed as
 * Server-Sent Events whose ids let a client resume with `Last-Event-ID`, requests and approvals, and
 * an auth hook that keeps tenants apart. Serve it on Node with `@baton/server/node`.
 *
 * @example
 * ```ts
 * import { createBatonApp } from '@baton/server';
 * import { serveBaton } from '@baton/server/node';
 * const server = await serveBaton(createBatonApp({ workflow: desk }), { port: 8787 });
 * ```
 */

export { type BatonAppOptions, createBatonApp } from './batonApp.js';
export type { Authenticate, Principal } from './http/auth.js';
export { type ErrorBody, errorResponse, STATUS_OF_CODE } from './http/errorResponse.js';
export { HttpError } from './http/errors.js';
export {
  type ResumeCutTurnsOptions,
  type ResumedTurn,
  reconcileEvery,
  resumeCutTurns,
} from './replicas/resumeCutTurns.js';
export type { LoggedEvent } from './streaming/branchLog.js';
export { comparePositions, type EventPosition, formatEventId, parseEventId } from './streaming/eventId.js';
export { TurnRuns, type TurnRunsOptions } from './streaming/turnRuns.js';
