import { type HeldLease, isLiveLease, MAIN_BRANCH } from '@baton/core';
import {
  type HandoffSession,
  type HandoffWorkflow,
  inProcessRunner,
  type SendOptions,
  type SessionRunner,
  type TurnStream,
} from '@baton/handoff';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { sseResponse } from '../streaming/sse.js';
import { runningElsewhere } from '../streaming/turnLease.js';
import type { StartedRun, TurnRuns } from '../streaming/turnRuns.js';
import { type Principal, tenantKeyOf } from './auth.js';
import { HttpError } from './errors.js';
import { sendRefusal } from './pendingRequests.js';
import { openSession, scopeOf } from './sessionAccess.js';

/** The Hono environment of every route: the auth middleware sets `principal`. */
export type BatonEnv = { Variables: { principal: Principal } };

/** The app every route group is mounted on. */
export type BatonHono = Hono<BatonEnv>;

const QuerySchema = z.object({
  branch: z.string().min(1).max(128).optional(),
  fromSeq: z.coerce.number().int().min(1).optional(),
  follow: z.enum(['true', 'false', '1', '0']).optional(),
  lastEventId: z.string().optional(),
});

/**
 * The request's query (`branch` defaults to `main`).
 * @throws {HttpError} 400 `INVALID_QUERY` naming each bad parameter
 */
export function queryOf(c: Context<BatonEnv>) {
  const parsed = QuerySchema.safeParse(c.req.query());
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message, code: issue.code }));
    throw new HttpError(
      400,
      'INVALID_QUERY',
      `Invalid query: ${issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}.`,
      issues,
    );
  }
  return { ...parsed.data, branch: parsed.data.branch ?? MAIN_BRANCH };
}

/**
 * What the route groups of `createBatonApp` share: the workflow, the turns running in this process,
 * and the steps of a call that runs a turn. Built once per app by {@link createRouteContext}.
 */
export interface RouteContext {
  workflow: HandoffWorkflow;
  runs: TurnRuns;
  keepAliveMs: number;
  /** Where turns run: in this process (default) or elsewhere (`BatonAppOptions.runner`). */
  runner: SessionRunner;
  /** Whether a turn runs on the branch (in this process). */
  isRunning(c: Context<BatonEnv>, id: string, branch: string): boolean;
  /** Opens the branch for a call that runs a turn: refused with 409 at once while a turn runs there. */
  openForTurn(c: Context<BatonEnv>, id: string, branch: string): Promise<HandoffSession>;
  /** Starts a turn call on the branch (the server reads it to its end). */
  startTurn(
    c: Context<BatonEnv>,
    session: HandoffSession,
    call: (session: HandoffSession, lease?: HeldLease) => TurnStream,
  ): Promise<StartedRun>;
  /** Starts a turn with the user's message; refused while requests wait, naming the route that answers them. */
  startSend(
    c: Context<BatonEnv>,
    session: HandoffSession,
    text: string | string[],
    options?: SendOptions,
  ): Promise<StartedRun>;
  /** Answers with a started turn's events (SSE) or its result (JSON, when the client prefers it). */
  turnResponse(c: Context<BatonEnv>, started: Promise<StartedRun>): Promise<Response>;
}

/**
 * Builds the {@link RouteContext} of one app.
 * @example
 * ```ts
 * const routes = createRouteContext(workflow, new TurnRuns(), 15_000);
 * registerTurnRoutes(app, routes);
 * ```
 */
export function createRouteContext(
  workflow: HandoffWorkflow,
  runs: TurnRuns,
  keepAliveMs: number,
  runner: SessionRunner = inProcessRunner,
): RouteContext {
  // Sessions opened on a branch whose last run was cut (its lease held but expired): their turn logs what that run stored.
  const afterCut = new WeakSet<HandoffSession>();
  const startTurn: RouteContext['startTurn'] = (c, session, call) =>
    runs.start(
      tenantKeyOf(c.var.principal),
      session.id,
      session.branchId,
      session.messages.at(-1)?.seq ?? 0,
      (lease) => call(session, lease),
      afterCut.has(session) ? { afterCut: true } : {},
    );
  return {
    workflow,
    runs,
    keepAliveMs,
    runner,
    isRunning: (c, id, branch) => runs.log(tenantKeyOf(c.var.principal), id, branch)?.running === true,
    openForTurn: async (c, id, branch) => {
      runs.assertIdle(tenantKeyOf(c.var.principal), id, branch);
      // A turn running elsewhere (another process, or an AG-UI or MCP route of this one) holds the
      // branch's lease: refused before the session is opened (which would wait for that turn).
      const lease = await runs.leases?.getBranchLease(id, branch, scopeOf(c.var.principal));
      if (isLiveLease(lease) && lease!.owner !== runs.owner) throw runningElsewhere(id, branch);
      const session = await openSession(workflow, c.var.principal, id, branch);
      if (lease?.held === true && !isLiveLease(lease)) afterCut.add(session);
      return session;
    },
    startTurn,
    startSend: (c, session, text, options = {}) =>
      startTurn(c, session, (s, lease) => runner.send(s, text, lease ? { ...options, lease } : options)).catch(
        (error: unknown) => {
          throw sendRefusal(session, error);
        },
      ),
    turnResponse: async (c, started) => {
      const { queue, stream, ended } = await started;
      if (prefersJson(c)) {
        queue.close();
        const result = await stream;
        await ended; // the branch is free (lease released) when the client gets the result
        return c.json(result);
      }
      return sseResponse(c, { replay: [], queue, after: { seq: -1, index: 0 }, follow: false, keepAliveMs });
    },
  };
}

/** Whether the client asked for JSON rather than an event stream. */
function prefersJson(c: Context): boolean {
  const accept = c.req.header('accept') ?? '';
  return accept.includes('application/json') && !accept.includes('text/event-stream');
}
