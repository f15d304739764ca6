import { createId } from '@baton/core';
import type { RequestAnswer } from '@baton/handoff';
import type { z } from 'zod';
import { uiMessageStreamResponse } from '../streaming/sse.js';
import { assetRefsByIds } from './assetRoutes.js';
import type { BatonHono, RouteContext } from './routeContext.js';
import { queryOf } from './routeContext.js';
import { AnswerBody, ChatBody, lastUserText, readBody, SendMessageBody } from './schemas.js';

/**
 * The routes of `createBatonApp` that run a turn (409 at once while one runs on the branch):
 *
 * - `POST /sessions/:id/messages?branch=` `{ text, assets? }` → the turn as SSE, or the `TurnResult` as JSON
 * - `POST /sessions/:id/chat?branch=` (the body `useChat` sends) → the turn as a UI message stream
 * - `POST /sessions/:id/requests/:requestId?branch=` (an answer) → the rest of the turn, as `/messages`
 *
 * @example
 * ```ts
 * registerTurnRoutes(app, createRouteContext(workflow, runs, 15_000));
 * ```
 */
export function registerTurnRoutes(app: BatonHono, routes: RouteContext): void {
  const { workflow } = routes;

  app.post('/sessions/:id/messages', async (c) => {
    const { branch } = queryOf(c);
    const body = await readBody(c.req.raw, SendMessageBody);
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    const assets = await assetRefsByIds(workflow, c.var.principal, session.id, body.assets);
    return routes.turnResponse(c, routes.startSend(c, session, body.text, assets === undefined ? {} : { assets }));
  });

  app.post('/sessions/:id/chat', async (c) => {
    const { branch } = queryOf(c);
    const text = lastUserText(await readBody(c.req.raw, ChatBody));
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    const started = await routes.startSend(c, session, text);
    return uiMessageStreamResponse(c, started.queue, createId());
  });

  app.post('/sessions/:id/requests/:requestId', async (c) => {
    const { branch } = queryOf(c);
    const body = await readBody(c.req.raw, AnswerBody);
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    return routes.turnResponse(
      c,
      routes.startTurn(c, session, (s, lease) =>
        routes.runner.respond(s, c.req.param('requestId'), answerOf(body), lease ? { lease } : {}),
      ),
    );
  });
}

/** The session's answer for a request's HTTP body. */
function answerOf(body: z.output<typeof AnswerBody>): RequestAnswer {
  if (body.text !== undefined) return body.text;
  if (body.approved === true && body.always !== undefined) return { approved: true, always: body.always };
  if (body.approved === true) return { approved: true };
  if (body.approved === false)
    return body.reason === undefined ? { approved: false } : { approved: false, reason: body.reason };
  if (body.reply !== undefined) return { reply: body.reply };
  return body.reason === undefined ? { handoff: body.handoff! } : { handoff: body.handoff!, reason: body.reason };
}
