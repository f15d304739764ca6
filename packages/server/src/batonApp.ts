import { createId, MAIN_BRANCH, type Message } from '@baton/core';
import { formatTimeline, type HandoffSession, type HandoffWorkflow, type RequestAnswer, type SendOptions, sessionTimeline, type TurnStream } from '@baton/handoff';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { ASSET_UPLOAD_PATH, assetRefsByIds, DEFAULT_MAX_ASSET_UPLOAD_BYTES, registerAssetRoutes } from './http/assetRoutes.js';
import { type Authenticate, type Principal, tenantKeyOf } from './http/auth.js';
import { errorResponse } from './http/errorResponse.js';
import { HttpError } from './http/errors.js';
import { sendRefusal } from './http/pendingRequests.js';
import { AnswerBody, ChatBody, CloseBody, CreateSessionBody, ForkBody, lastUserText, readBody, SendMessageBody } from './http/schemas.js';
import { createSession, openSession, runningView, scopeOf, sessionDocument, sessionView } from './http/sessionAccess.js';
import type { LoggedEvent } from './streaming/branchLog.js';
import { type EventPosition, formatEventId, parseEventId } from './streaming/eventId.js';
import { sseResponse, uiMessageStreamResponse } from './streaming/sse.js';
import { type StartedRun, TurnRuns, type TurnRunsOptions } from './streaming/turnRuns.js';

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
  /** Largest request body in bytes (default 1 MiB); larger ones get 413. Asset uploads have their own limit. */
  maxBodyBytes?: number;
  /** Largest asset upload (`POST /sessions/:id/assets`) in bytes (default 25 MiB); larger ones get 413. The store's `maxAssetBytes` applies too. */
  maxAssetBytes?: number;
  /** Milliseconds between SSE keep-alive comments (default 15,000). */
  keepAliveMs?: number;
}

type Env = { Variables: { principal: Principal } };

const QuerySchema = z.object({
  branch: z.string().min(1).max(128).optional(),
  fromSeq: z.coerce.number().int().min(1).optional(),
  follow: z.enum(['true', 'false', '1', '0']).optional(),
  lastEventId: z.string().optional(),
});

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
 *   message stream protocol (see {@link UIMessageChunker})
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
export function createBatonApp(options: BatonAppOptions): Hono<Env> {
  const { workflow } = options;
  const runs = new TurnRuns(options.events);
  const app = new Hono<Env>();
  const keepAliveMs = options.keepAliveMs ?? 15_000;

  app.onError((error, c) => {
    const { status, body } = errorResponse(error);
    if (status === 500) console.error('[baton/server]', error);
    return c.json(body, status as 400);
  });
  const jsonBodyLimit = bodyLimit({
    maxSize: options.maxBodyBytes ?? 1 << 20,
    onError: () => {
      throw new HttpError(413, 'BODY_TOO_LARGE', `The request body is larger than ${options.maxBodyBytes ?? 1 << 20} bytes.`);
    },
  });
  // An asset upload is limited by its own route (maxAssetBytes), not by the JSON bodies' limit.
  app.use('*', (c, next) => (c.req.method === 'POST' && ASSET_UPLOAD_PATH.test(c.req.path) ? next() : jsonBodyLimit(c, next)));
  app.use('*', async (c, next) => {
    let principal: Principal | undefined;
    try {
      principal = options.authenticate === undefined ? {} : await options.authenticate(c.req.raw);
    } catch {
      principal = undefined;
    }
    if (principal === undefined) throw new HttpError(401, 'UNAUTHENTICATED', 'The request carries no credentials the server accepts.');
    c.set('principal', principal);
    await next();
  });

  const query = (c: Context<Env>) => {
    const parsed = QuerySchema.safeParse(c.req.query());
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message, code: issue.code }));
      throw new HttpError(400, 'INVALID_QUERY', `Invalid query: ${issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}.`, issues);
    }
    return { ...parsed.data, branch: parsed.data.branch ?? MAIN_BRANCH };
  };
  const isRunning = (c: Context<Env>, id: string, branch: string) => runs.log(tenantKeyOf(c.var.principal), id, branch)?.running === true;

  /** Starts a turn call on the branch (the server reads it to its end). */
  const startTurn = (c: Context<Env>, session: HandoffSession, call: (session: HandoffSession) => TurnStream) =>
    runs.start(tenantKeyOf(c.var.principal), session.id, session.branchId, session.messages.at(-1)?.seq ?? 0, call(session));
  /** Starts a turn with the user's message; refused while requests wait, naming the route that answers them. */
  const startSend = (c: Context<Env>, session: HandoffSession, text: string | string[], options: SendOptions = {}) =>
    startTurn(c, session, (s) => s.send(text, options)).catch((error: unknown) => {
      throw sendRefusal(session, error);
    });
  /** Answers with a started turn's events (SSE) or its result (JSON). */
  const turnResponse = async (c: Context<Env>, started: Promise<StartedRun>) => {
    const { queue, stream } = await started;
    if (prefersJson(c)) {
      queue.close();
      return c.json(await stream);
    }
    return sseResponse(c, { replay: [], queue, after: { seq: -1, index: 0 }, follow: false, keepAliveMs });
  };
  /** Opens the branch for a call that runs a turn: refused with 409 at once while a turn runs there. */
  const openForTurn = async (c: Context<Env>, id: string, branch: string) => {
    runs.assertIdle(tenantKeyOf(c.var.principal), id, branch);
    return openSession(workflow, c.var.principal, id, branch);
  };

  app.post('/sessions', async (c) => {
    const body = await readBody(c.req.raw, CreateSessionBody, { optional: true });
    const session = await createSession(workflow, c.var.principal, body.id ?? createId(), body.metadata);
    return c.json(sessionView(session, false), 201);
  });

  app.get('/sessions/:id', async (c) => {
    const { branch } = query(c);
    const id = c.req.param('id');
    const log = runs.log(tenantKeyOf(c.var.principal), id, branch);
    // While a turn runs here, answer from the session document and the branch log without waiting for the turn's lock.
    if (log?.running === true) return c.json(runningView(await sessionDocument(workflow, c.var.principal, id), branch, log.cursor.seq));
    const session = await openSession(workflow, c.var.principal, id, branch);
    return c.json(sessionView(session, isRunning(c, session.id, branch)));
  });

  app.get('/sessions/:id/messages', async (c) => {
    const { branch, fromSeq } = query(c);
    const id = c.req.param('id');
    await sessionDocument(workflow, c.var.principal, id);
    const messages = await workflow.config.store.readMessages(id, branch, { ...scopeOf(c.var.principal), ...(fromSeq === undefined ? {} : { fromSeq }) });
    return c.json({ messages });
  });

  app.post('/sessions/:id/messages', async (c) => {
    const { branch } = query(c);
    const body = await readBody(c.req.raw, SendMessageBody);
    const session = await openForTurn(c, c.req.param('id'), branch);
    const assets = await assetRefsByIds(workflow, c.var.principal, session.id, body.assets);
    return turnResponse(c, startSend(c, session, body.text, assets === undefined ? {} : { assets }));
  });

  app.post('/sessions/:id/chat', async (c) => {
    const { branch } = query(c);
    const text = lastUserText(await readBody(c.req.raw, ChatBody));
    const session = await openForTurn(c, c.req.param('id'), branch);
    const started = await startSend(c, session, text);
    return uiMessageStreamResponse(c, started.queue, createId());
  });

  app.post('/sessions/:id/requests/:requestId', async (c) => {
    const { branch } = query(c);
    const body = await readBody(c.req.raw, AnswerBody);
    const session = await openForTurn(c, c.req.param('id'), branch);
    return turnResponse(c, startTurn(c, session, (s) => s.respond(c.req.param('requestId'), answerOf(body))));
  });

  app.delete('/sessions/:id/approval-grants/:toolName', async (c) => {
    const { branch } = query(c);
    const session = await openForTurn(c, c.req.param('id'), branch);
    const revoked = await session.revokeApproval(c.req.param('toolName'));
    return c.json({ revoked, approvalGrants: session.approvalGrants });
  });

  app.post('/sessions/:id/close', async (c) => {
    const { branch } = query(c);
    const body = await readBody(c.req.raw, CloseBody, { optional: true });
    const session = await openForTurn(c, c.req.param('id'), branch);
    await session.close(body.reason === undefined ? {} : { reason: body.reason });
    return c.json(sessionView(session, false));
  });

  app.get('/sessions/:id/timeline', async (c) => {
    const { branch } = query(c);
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
    const { branch } = query(c);
    const body = await readBody(c.req.raw, ForkBody);
    const session = await openForTurn(c, c.req.param('id'), branch);
    const fork = await session.fork({ atSeq: body.atSeq, branchId: body.branchId });
    return c.json(sessionView(fork, false), 201);
  });

  app.get('/sessions/:id/events', async (c) => {
    const q = query(c);
    const id = c.req.param('id');
    await sessionDocument(workflow, c.var.principal, id);
    const lastEventId = c.req.header('last-event-id') ?? q.lastEventId;
    const from = lastEventId === undefined ? undefined : parseEventId(lastEventId);
    if (from !== undefined && (from.sessionId !== id || (c.req.query('branch') !== undefined && from.branchId !== q.branch))) {
      throw new HttpError(400, 'INVALID_LAST_EVENT_ID', `Last-Event-ID ${JSON.stringify(lastEventId)} is not an event of session ${JSON.stringify(id)} branch ${JSON.stringify(q.branch)}.`);
    }
    const branch = from?.branchId ?? q.branch;
    const follow = q.follow === 'true' || q.follow === '1';
    const tenantKey = tenantKeyOf(c.var.principal);
    const log = follow ? runs.watch(tenantKey, id, branch, await headSeqOf(workflow, c.var.principal, id, branch)) : runs.log(tenantKey, id, branch);
    const queue = log?.subscribe();
    const replay: LoggedEvent[] = [];
    let after: EventPosition = from?.position ?? log?.cursor ?? { seq: Number.MAX_SAFE_INTEGER, index: 0 };
    if (from !== undefined && log?.covers(from.position) === true) replay.push(...log.after(from.position));
    else if (from !== undefined) {
      const stored = await workflow.config.store.readMessages(id, branch, { ...scopeOf(c.var.principal), fromSeq: from.position.seq + 1 });
      replay.push(...stored.map((message) => storedEvent(id, branch, message)));
      const storedThrough: EventPosition = { seq: stored.at(-1)?.seq ?? from.position.seq, index: stored.length > 0 ? 0 : from.position.index };
      if (log !== undefined) replay.push(...log.after(storedThrough));
    }
    after = replay.at(-1)?.position ?? after;
    const live = follow || log?.running === true;
    if (!live) queue?.close();
    return sseResponse(c, { replay, queue: live ? queue : undefined, after, follow, keepAliveMs });
  });

  registerAssetRoutes(app, workflow, options.maxAssetBytes ?? DEFAULT_MAX_ASSET_UPLOAD_BYTES);
  return app;
}

/** A stored message as the `message` event a reconnecting client missed (position `<seq>.0`). */
function storedEvent(sessionId: string, branchId: string, message: Message): LoggedEvent {
  const position = { seq: message.seq, index: 0 };
  return { id: formatEventId(sessionId, branchId, position), position, event: { type: 'message', sessionId, branchId, message } };
}

async function headSeqOf(workflow: HandoffWorkflow, principal: Principal, id: string, branch: string): Promise<number> {
  const messages = await workflow.config.store.readMessages(id, branch, scopeOf(principal));
  return messages.at(-1)?.seq ?? 0;
}

/** Whether the client asked for JSON rather than an event stream. */
function prefersJson(c: Context): boolean {
  const accept = c.req.header('accept') ?? '';
  return accept.includes('application/json') && !accept.includes('text/event-stream');
}

function answerOf(body: z.output<typeof AnswerBody>): RequestAnswer {
  if (body.text !== undefined) return body.text;
  if (body.approved === true && body.always !== undefined) return { approved: true, always: body.always };
  if (body.approved === true) return { approved: true };
  if (body.approved === false) return body.reason === undefined ? { approved: false } : { approved: false, reason: body.reason };
  if (body.reply !== undefined) return { reply: body.reply };
  return body.reason === undefined ? { handoff: body.handoff! } : { handoff: body.handoff!, reason: body.reason };
}

