import { type AGUIEvent, contentToText, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import { InvalidInputError, isLiveLease, MAIN_BRANCH, SessionClosedError } from '@baton/core';
import { type HandoffSession, type HandoffWorkflow, TurnStream } from '@baton/handoff';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { type Authenticate, type Principal, tenantKeyOf } from '../http/auth.js';
import { errorResponse } from '../http/errorResponse.js';
import { HttpError } from '../http/errors.js';
import { readBody } from '../http/schemas.js';
import { createSession, openSession, scopeOf } from '../http/sessionAccess.js';
import { runningElsewhere } from '../streaming/turnLease.js';
import { TurnRuns, type TurnRunsOptions } from '../streaming/turnRuns.js';
import { AguiEventMapper } from './aguiEventMapper.js';
import { matchResume, resumeAnswer } from './aguiInterrupts.js';
import { aguiStateOf } from './aguiState.js';

/** Options of {@link aguiRoutes}. */
export interface AguiRoutesOptions {
  /** The workflow a run talks to; its store keeps the sessions (one per AG-UI thread). */
  workflow: HandoffWorkflow;
  /** The auth hook, as `createBatonApp`'s (undefined or a throw: 401). Without one every run is anonymous. */
  authenticate?: Authenticate;
  /** Largest request body in bytes (default 1 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /**
   * How runs hold the branch's lease and write the store's event log (as `createBatonApp`'s `events`):
   * a run takes the lease before any model call, so a run and a REST send on one branch, in one
   * process or two, do not both run; the second is refused with 409.
   */
  events?: TurnRunsOptions;
}

type Env = { Variables: { principal: Principal } };

/**
 * An AG-UI endpoint over a handoff workflow, as a Hono app to mount where you like (e.g.
 * `app.route('/ag-ui', aguiRoutes({ workflow }))`). `POST /` takes AG-UI's `RunAgentInput` and
 * answers with the run's AG-UI events (SSE, or AG-UI's protobuf framing when the client asks for it):
 *
 * - `threadId` is the Baton session id: the first run on a thread creates the session (for the
 *   principal's tenant and user), later runs continue it. The server keeps the history, so only the
 *   last message of `messages` is read: it must be the user's, and its text is the turn's message.
 * - A run that pauses on a user-input request, a tool approval or a human step ends with
 *   `RUN_FINISHED` `outcome: { type: 'interrupt', interrupts }` (one per request, see `interruptOf`);
 *   the next run resumes it with `resume: [{ interruptId, status, payload }]` (see `resumeAnswer`).
 *   A `user_input` interrupt may also be answered by a plain next user message, as `session.send` does.
 * - The session's state ({@link AguiState}) comes as `STATE_SNAPSHOT` first, then as `STATE_DELTA`
 *   JSON Patches (the branch state's from the immer patches the runtime records); `RunAgentInput.state`
 *   and `tools` are not read (the workflow's agents have their own tools).
 *
 * A run holds the branch's lease in the store (when the store has leases, as the built-in ones do),
 * taken before any model call, and writes its events to the store's event log, so `GET
 * /sessions/:id` shows it `running` and `GET /sessions/:id/events` follows it on any replica.
 *
 * A client's mistake is answered before the stream starts, as JSON `{ error: { code, message } }`:
 * 400 (a body that is not a `RunAgentInput`, no user message, a resume entry for no open interrupt or
 * with a payload that does not fit it, a message while an approval waits), 401, 404 (another
 * user's thread), 409 (a turn runs on the thread's branch, here or in another process: nothing was
 * run), 410 (a closed session). A failure during the run is its `RUN_ERROR` event. The turn
 * runs to its end in the server even when the client goes away.
 *
 * @param options `{ workflow, authenticate?, maxBodyBytes? }`
 * @returns the Hono app (one route, `POST /`)
 * @example
 * ```ts
 * import { aguiRoutes } from '@baton/server/ag-ui';
 * const app = createBatonApp({ workflow: desk, authenticate });
 * app.route('/ag-ui', aguiRoutes({ workflow: desk, authenticate }));
 * // client: new HttpAgent({ url: 'http://127.0.0.1:8787/ag-ui', threadId: 'chat-1' }).runAgent()
 * ```
 */
export function aguiRoutes(options: AguiRoutesOptions): Hono<Env> {
  const { workflow } = options;
  const maxBytes = options.maxBodyBytes ?? 1 << 20;
  const runs = new TurnRuns(options.events, workflow.config.store);
  const app = new Hono<Env>();
  app.onError((error, c) => {
    const { status, body } = errorResponse(error);
    if (status === 500) console.error('[baton/server ag-ui]', error);
    return c.json(body, status as 400);
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: maxBytes,
      onError: () => {
        throw new HttpError(413, 'BODY_TOO_LARGE', `The request body is larger than ${maxBytes} bytes.`);
      },
    }),
  );
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

  app.post('/', async (c) => {
    const input = (await readBody(c.req.raw, RunAgentInputSchema)) as RunAgentInput;
    const principal = c.var.principal;
    const session = await threadSession(workflow, runs, principal, input.threadId);
    const call = turnCall(session, input);
    const mapper = new AguiEventMapper(
      input.threadId,
      input.runId,
      await aguiStateOf(workflow, session, scopeOf(principal)),
    );
    // The run takes the branch's lease before the response (a busy branch is a 409, nothing run) and
    // holds it until its last resume entry is answered: no other run slips in between two answers.
    const started = await runs.start(
      tenantKeyOf(principal),
      session.id,
      session.branchId,
      session.messages.at(-1)?.seq ?? 0,
      call,
    );
    const encoder = new EventEncoder({ accept: c.req.header('accept') ?? 'text/event-stream' });
    const body = eventStream(encoder, async (send) => {
      send(mapper.start());
      try {
        for await (const item of started.queue) {
          if (item.kind === 'run.ended') break;
          send(mapper.map(item.logged.event));
        }
        started.queue.close();
        await started.stream; // the turn's failure, if it failed
        await started.ended; // its lease released
        send(mapper.finish(await aguiStateOf(workflow, session, scopeOf(principal))));
      } catch (error) {
        const { body: failure } = errorResponse(error);
        if (failure.error.code === 'INTERNAL') console.error('[baton/server ag-ui]', error);
        send(mapper.fail(failure.error.code, failure.error.message));
      }
    });
    return new Response(body, {
      headers: { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
    });
  });
  return app;
}

/**
 * A stream of the events `run` sends, encoded; closed when `run` resolves. `run` goes on when the
 * client goes away (the turn is the server's to finish); what it sends then is dropped.
 */
function eventStream(
  encoder: EventEncoder,
  run: (send: (events: AGUIEvent[]) => void) => Promise<void>,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const send = (events: AGUIEvent[]) => {
        try {
          for (const event of events) if (open) controller.enqueue(encoder.encodeBinary(event));
        } catch {
          open = false;
        }
      };
      void run(send).finally(() => {
        if (!open) return;
        open = false;
        try {
          controller.close();
        } catch {
          // cancelled by the client meanwhile
        }
      });
    },
  });
}

/**
 * The session of an AG-UI thread: created for the principal on the thread's first run.
 * @throws {NotFoundError} (404) when the thread is another user's session; {@link ConcurrencyError}
 *   (409) while a turn runs on it
 */
async function threadSession(
  workflow: HandoffWorkflow,
  runs: TurnRuns,
  principal: Principal,
  threadId: string,
): Promise<HandoffSession> {
  const exists = (await workflow.config.store.getSession(threadId, scopeOf(principal))) !== undefined;
  if (!exists) return createSession(workflow, principal, threadId, undefined);
  // A turn running on the thread (here or in another process) holds its lease: 409 before the
  // session is opened (which would wait for that turn).
  runs.assertIdle(tenantKeyOf(principal), threadId, MAIN_BRANCH);
  const lease = await runs.leases?.getBranchLease(threadId, MAIN_BRANCH, scopeOf(principal));
  if (isLiveLease(lease) && lease!.owner !== runs.owner) throw runningElsewhere(threadId, MAIN_BRANCH);
  return openSession(workflow, principal, threadId);
}

/**
 * The session call a run makes: one `respond` per resume entry (in the order the requests were
 * made), read as one stream so the run holds the branch's lease across them; or one `send` of the
 * last user message. Checked before anything runs.
 * @throws {SessionClosedError} (410) for a closed session; {@link InvalidInputError} (400) for a resume
 *   entry that answers no open interrupt or does not fit it, no user message with text, or a message while a request other than one `user_input` waits
 */
function turnCall(session: HandoffSession, input: RunAgentInput): () => TurnStream {
  if (session.info.status === 'closed') {
    throw new SessionClosedError(
      `Thread ${JSON.stringify(session.id)} is a closed session: it takes no more runs; start a new thread.`,
    );
  }
  const pending = session.pendingRequests;
  if (input.resume !== undefined && input.resume.length > 0) {
    const answers = matchResume(pending, input.resume).map(({ request, entry }) => ({
      id: request.id,
      answer: resumeAnswer(request, entry),
    }));
    return () =>
      new TurnStream(
        { sessionId: session.id, branchId: session.branchId },
        async function* () {
          for (const { id, answer } of answers) yield* session.respond(id, answer);
        },
        () => session.pendingRequests,
      );
  }
  const last = input.messages.at(-1);
  const text = last?.role === 'user' ? contentToText(last.content).trim() : '';
  if (text === '') {
    throw new InvalidInputError(
      `RunAgentInput.messages must end with the user's message, with text (the last is ${last === undefined ? 'missing' : `a ${JSON.stringify(last.role)} message`}); to answer interrupts send resume entries instead.`,
    );
  }
  const waiting = pending.filter((request) => request.type !== 'user_input');
  if (waiting.length > 0 || pending.length > 1) {
    const ids = pending.map((request) => `${JSON.stringify(request.id)} (${request.type})`).join(', ');
    throw new InvalidInputError(
      `Thread ${JSON.stringify(session.id)} is paused on interrupts a new message cannot answer: ${ids}. Send RunAgentInput.resume with an entry { interruptId, status: "resolved", payload } for each.`,
    );
  }
  return () => session.send(text);
}
