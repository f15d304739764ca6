import { createId, isLiveLease } from '@baton/core';
import { formatTimeline, sessionTimeline } from '@baton/handoff';
import { tenantKeyOf } from './auth.js';
import type { BatonHono, RouteContext } from './routeContext.js';
import { queryOf } from './routeContext.js';
import { CloseBody, CreateSessionBody, ForkBody, readBody } from './schemas.js';
import { createSession, openSession, runningView, scopeOf, sessionDocument, sessionView } from './sessionAccess.js';

/**
 * The session routes of `createBatonApp` (none runs a turn):
 *
 * - `POST /sessions` → 201 the session; `GET /sessions/:id?branch=` → the session view
 * - `GET /sessions/:id/messages?branch=&fromSeq=` → `{ messages }`
 * - `DELETE /sessions/:id/approval-grants/:toolName?branch=` → `{ revoked, approvalGrants }`
 * - `POST /sessions/:id/close` → the session; `POST /sessions/:id/fork?branch=` → 201 the new branch
 * - `GET /sessions/:id/timeline?branch=` → the timeline; `GET /sessions/:id/branches` → `{ branches }`
 *
 * @example
 * ```ts
 * registerSessionRoutes(app, createRouteContext(workflow, runs, 15_000));
 * ```
 */
export function registerSessionRoutes(app: BatonHono, routes: RouteContext): void {
  const { workflow, runs } = routes;

  app.post('/sessions', async (c) => {
    const body = await readBody(c.req.raw, CreateSessionBody, { optional: true });
    const session = await createSession(workflow, c.var.principal, body.id ?? createId(), body.metadata);
    return c.json(sessionView(session, false), 201);
  });

  app.get('/sessions/:id', async (c) => {
    const { branch } = queryOf(c);
    const id = c.req.param('id');
    const log = runs.log(tenantKeyOf(c.var.principal), id, branch);
    // While a turn runs here, answer from the session document and the branch log without waiting for the turn's lock.
    if (log?.running === true)
      return c.json(runningView(await sessionDocument(workflow, c.var.principal, id), branch, log.cursor.seq));
    // A turn running in another replica: its lease is live in the store.
    const lease = await runs.leases?.getBranchLease(id, branch, scopeOf(c.var.principal));
    if (isLiveLease(lease) && lease!.owner !== runs.owner) {
      const info = await sessionDocument(workflow, c.var.principal, id);
      const stored = await workflow.config.store.readMessages(id, branch, scopeOf(c.var.principal));
      return c.json(runningView(info, branch, stored.at(-1)?.seq ?? 0));
    }
    const session = await openSession(workflow, c.var.principal, id, branch);
    return c.json(sessionView(session, routes.isRunning(c, session.id, branch)));
  });

  app.get('/sessions/:id/messages', async (c) => {
    const { branch, fromSeq } = queryOf(c);
    const id = c.req.param('id');
    await sessionDocument(workflow, c.var.principal, id);
    const messages = await workflow.config.store.readMessages(id, branch, {
      ...scopeOf(c.var.principal),
      ...(fromSeq === undefined ? {} : { fromSeq }),
    });
    return c.json({ messages });
  });

  app.delete('/sessions/:id/approval-grants/:toolName', async (c) => {
    const { branch } = queryOf(c);
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    const revoked = await session.revokeApproval(c.req.param('toolName'));
    return c.json({ revoked, approvalGrants: session.approvalGrants });
  });

  app.post('/sessions/:id/close', async (c) => {
    const { branch } = queryOf(c);
    const body = await readBody(c.req.raw, CloseBody, { optional: true });
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    await routes.runner.close(session, body.reason === undefined ? {} : { reason: body.reason });
    // A runner that closed it elsewhere (on a worker) left this object as it was opened: read it again.
    const closed =
      session.info.status === 'closed' ? session : await openSession(workflow, c.var.principal, session.id, branch);
    return c.json(sessionView(closed, false));
  });

  app.get('/sessions/:id/timeline', async (c) => {
    const { branch } = queryOf(c);
    const id = c.req.param('id');
    await sessionDocument(workflow, c.var.principal, id);
    const timeline = await sessionTimeline(workflow.config.store, id, { branch, ...scopeOf(c.var.principal) });
    return c.json({ ...timeline, text: formatTimeline(timeline) });
  });

  app.get('/sessions/:id/branches', async (c) => {
    const id = c.req.param('id');
    await sessionDocument(workflow, c.var.principal, id);
    return c.json({ branches: await workflow.config.store.listBranches(id, scopeOf(c.var.principal)) });
  });

  app.post('/sessions/:id/fork', async (c) => {
    const { branch } = queryOf(c);
    const body = await readBody(c.req.raw, ForkBody);
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    const fork = await session.fork({ atSeq: body.atSeq, branchId: body.branchId });
    return c.json(sessionView(fork, false), 201);
  });
}
