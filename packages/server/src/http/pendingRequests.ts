import { InvalidInputError, MAIN_BRANCH, type Request } from '@baton/core';
import type { HandoffSession } from '@baton/handoff';

/** The body that answers each kind of request on `POST /sessions/:id/requests/:requestId`. */
const ANSWER_BODY: Readonly<Record<Request['type'], string>> = {
  user_input: '{ "text": "…" }',
  tool_approval: '{ "approved": true } or { "approved": false, "reason": "…" }',
  human_step: '{ "reply": "…" } or { "handoff": "<agent>", "reason": "…" }',
};

/**
 * What a client is told when it sends a message while requests wait on the branch: the session
 * refuses it naming the library call (`session.respond(requestId, answer)`); over HTTP the route
 * that answers each request is named instead, with its id and the body it takes. Any other error
 * is returned as it is.
 *
 * @param session the session the message was sent to
 * @param error what sending the message threw before the turn started
 * @returns an {@link InvalidInputError} (400) naming `POST /sessions/:id/requests/:requestId` for
 *   each pending request, or `error` itself
 * @example
 * ```ts
 * try { await startTurn(session, (s) => s.send(text)); }
 * catch (error) { throw sendRefusal(session, error); }
 * ```
 */
export function sendRefusal(session: HandoffSession, error: unknown): unknown {
  const pending = session.pendingRequests;
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code !== 'INVALID_INPUT' || pending.length === 0) return error;
  const query = session.branchId === MAIN_BRANCH ? '' : `?branch=${encodeURIComponent(session.branchId)}`;
  const routes = pending.map((request) => {
    const route = `POST /sessions/${encodeURIComponent(session.id)}/requests/${encodeURIComponent(request.id)}${query}`;
    return `${describe(request)}: ${route} with ${ANSWER_BODY[request.type]}`;
  });
  return new InvalidInputError(
    `Session ${JSON.stringify(session.id)} is waiting on ${pending.length === 1 ? 'a request' : `${pending.length} requests`} that a new message cannot answer; answer ${pending.length === 1 ? 'it' : 'each'} instead: ${routes.join('; ')}.`,
    { cause: error },
  );
}

function describe(request: Request): string {
  const what = request.type === 'tool_approval' ? ` to call ${request.toolName}` : '';
  return `${request.type} request ${JSON.stringify(request.id)} from ${request.agent}${what}`;
}
