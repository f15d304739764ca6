import {
  type ApprovalGrant,
  type ApprovalGrantLookup,
  ApprovalGrantSchema,
  InvalidInputError,
  isoNow,
  type Request,
  type State,
} from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import type { RequestAnswer } from '../config/handoffTypes.js';
import { saveCheckpoint } from '../runtime/checkpointer.js';

/**
 * The key of session-scoped state under which a session keeps its standing approvals ("always
 * allow"), an array of `ApprovalGrant`s. Reserved for the runtime: change grants with
 * `session.respond(id, { approved: true, always: 'session' })` and `session.revokeApproval(toolName)`.
 * Being session state, grants change through immer like any state, so checkpoints carry them, a
 * recovery re-applies them, and every branch of the session shares them.
 * @example
 * ```ts
 * const stored = (await store.getSession('chat-81'))?.state[APPROVAL_GRANTS_KEY]; // read it with approvalGrantsOf
 * ```
 */
export const APPROVAL_GRANTS_KEY = 'baton:approvalGrants';

/** The scopes a standing approval may have; `'session'` is the only one so far. */
const GRANT_SCOPES: readonly string[] = ['session'];

/**
 * The standing approvals kept in session state `state`, oldest first (an entry that is not a valid
 * grant, e.g. written by hand, is left out: it allows nothing).
 *
 * @example
 * ```ts
 * approvalGrantsOf(session.info.state);
 * // [{ toolName: 'refund', scope: 'session', grantedAt: '…', requestId: '…', agent: 'billing' }]
 * ```
 */
export function approvalGrantsOf(state: Readonly<State>): ApprovalGrant[] {
  const stored = state[APPROVAL_GRANTS_KEY];
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((entry) => {
    const parsed = ApprovalGrantSchema.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

/** The grant for `toolName` in session state `state`, if there is one. */
export function findApprovalGrant(state: Readonly<State>, toolName: string): ApprovalGrant | undefined {
  return approvalGrantsOf(state).find((grant) => grant.toolName === toolName);
}

/**
 * The lookup a turn's executors get ({@link ApprovalGrantLookup}): the grant the runtime holds for a
 * tool, confirmed against the stored session document before a call runs under it, so a revoke made
 * by another process (or another branch's session object) since this one loaded is seen at once.
 * When the document changed since, it decides, except for grants this runtime made since it loaded
 * (not stored until its turn settles). Costs one `getSession` per call that would run under a grant.
 */
export function grantLookup(runtime: SessionRuntime): ApprovalGrantLookup {
  return async (toolName) => {
    const held = findApprovalGrant(runtime.state.session, toolName);
    if (held === undefined) return undefined;
    const stored = await runtime.config.store.getSession(runtime.sessionId, runtime.scope);
    if (stored === undefined) return undefined;
    if (stored.version === runtime.session.version) return held;
    const current = findApprovalGrant(stored.state, toolName);
    if (current !== undefined) return current.requestId === held.requestId ? held : current;
    // Known when this runtime loaded but gone from the store now: revoked elsewhere.
    const loaded = approvalGrantsOf(runtime.session.state).some((grant) => grant.requestId === held.requestId);
    return loaded ? undefined : held;
  };
}

/**
 * Checks the `always` of an answer to a `tool_approval` request before the turn goes on.
 * @throws {InvalidInputError} when `always` is not `'session'`, or comes with a rejection
 */
export function assertAlways(request: Request, answer: RequestAnswer): void {
  if (request.type !== 'tool_approval' || typeof answer !== 'object' || answer === null) return;
  const { always } = answer as { always?: unknown };
  if (always === undefined) return;
  if (!GRANT_SCOPES.includes(always as string)) {
    throw new InvalidInputError(
      `always must be 'session' (allow ${request.toolName} for the rest of this session), ` +
        `not ${JSON.stringify(always)}; grants per user are not supported.`,
    );
  }
  if ((answer as { approved?: unknown }).approved !== true) {
    throw new InvalidInputError(
      `always: ${JSON.stringify(always)} goes with { approved: true } only; ` +
        `a rejection of ${request.toolName} grants nothing.`,
    );
  }
}

/** Whether `answer` approves with "always allow". */
export function grantsAlways(answer: RequestAnswer): boolean {
  if (typeof answer !== 'object' || answer === null || !('approved' in answer)) return false;
  return answer.approved === true && answer.always === 'session';
}

/**
 * Records a standing approval of `request`'s tool, answered with "always allow": the grant goes
 * into session state (replacing an older grant of the same tool), the step's other requests for the
 * same tool are answered by it (their calls run under the grant), and a checkpoint is saved, so the
 * grant is durable before any tool runs.
 *
 * @returns the grant
 * @throws what saving the checkpoint throws (`ConcurrencyError`, `StoreError`)
 */
export async function grantApproval(
  runtime: SessionRuntime,
  request: Extract<Request, { type: 'tool_approval' }>,
): Promise<ApprovalGrant> {
  const { toolName, id: requestId, agent } = request;
  const grant: ApprovalGrant = { toolName, scope: 'session', grantedAt: isoNow(), requestId, agent };
  const kept = approvalGrantsOf(runtime.state.session).filter((g) => g.toolName !== grant.toolName);
  // The whole list is replaced: its patch is a value, so a recovery that applies it again gives the same list.
  runtime.state.update('session', (draft) => {
    draft[APPROVAL_GRANTS_KEY] = [...kept, grant];
  });
  runtime.dropRequests((r) => r.type === 'tool_approval' && r.toolName === toolName);
  await saveCheckpoint(runtime);
  return grant;
}
