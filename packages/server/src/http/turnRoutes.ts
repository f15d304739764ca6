import { createId } from '@baton/core';
import type { RequestAnswer } from '@baton/handoff';
import type { z } from 'zod';
import { uiMessageStreamResponse } from '../streaming/sse.js';
import { assetRefsByIds } from './assetRoutes.js';
import { chatFileAssets } from './chatFiles.js';
import type { BatonHono, RouteContext } from './routeContext.js';
import { queryOf } from './routeContext.js';
import { AnswerBody, ChatBody, lastUserMessage, readBody, SendMessageBody } from './schemas.js';

/**
 * The routes of `createBatonApp` that run a turn (409 at once while one runs on the branch):
 *
 * - `POST /sessions/:id/messages?branch=` `{ text, assets? }` → the turn as SSE, or the `TurnResult` as JSON
 * - `POST /sessions/:id/chat?branch=` (the body `useChat` sends) → the turn as a UI message stream; the last
 *   user message's text is the message, its file parts its assets (a `data:` URL is stored as a new asset of the
 *   session, at most `maxAssetBytes` decoded, else 413; a `/sessions/:id/assets/:assetId` URL of this session is
 *   that asset, else 404; any other URL is 400 `UNSUPPORTED_FILE_URL`, never fetched). The turn is checked
 *   (409) before anything is stored, and a refused turn takes back what it stored.
 * - `POST /sessions/:id/requests/:requestId?branch=` (an answer) → the rest of the turn, as `/messages`
 *
 * @param maxAssetBytes the largest file a chat message's `data:` URL may hold, decoded, in bytes
 * @example
 * ```ts
 * registerTurnRoutes(app, createRouteContext(workflow, runs, 15_000), 25 * 1024 * 1024);
 * ```
 */
export function registerTurnRoutes(app: BatonHono, routes: RouteContext, maxAssetBytes: number): void {
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
    const { text, files } = lastUserMessage(await readBody(c.req.raw, ChatBody));
    const session = await routes.openForTurn(c, c.req.param('id'), branch);
    const { assets, discard } = await chatFileAssets(
      workflow,
      c.var.principal,
      session.id,
      files,
      c.req,
      maxAssetBytes,
    );
    const started = await routes
      .startSend(c, session, text, assets === undefined ? {} : { assets })
      .catch(async (error: unknown) => {
        await discard();
        throw error;
      });
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
