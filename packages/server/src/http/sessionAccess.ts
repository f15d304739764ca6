import { assertSafeMetadata, ConcurrencyError, MAIN_BRANCH, NotFoundError, type Session } from '@baton/core';
import { approvalGrantsOf, type HandoffSession, type HandoffWorkflow } from '@baton/handoff';
import type { Principal } from './auth.js';

/** The store scope of a principal's calls. */
export function scopeOf(principal: Principal): { tenantId?: string } {
  return principal.tenantId === undefined ? {} : { tenantId: principal.tenantId };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(
    `Session ${JSON.stringify(id)} does not exist (or belongs to someone else); create one with POST /sessions.`,
  );
}

/** Whether `principal` may reach `session`: same tenant (the store checks that), and the same user when both have one. */
function isOwnedBy(session: Session, principal: Principal): boolean {
  return session.userId === undefined || principal.userId === undefined || session.userId === principal.userId;
}

/**
 * Reads the session document for `principal` without taking the session's lock (for reads that
 * must not wait for a running turn).
 * @throws {NotFoundError} when the session does not exist for this principal (another tenant's or user's included)
 */
export async function sessionDocument(workflow: HandoffWorkflow, principal: Principal, id: string): Promise<Session> {
  const session = await workflow.config.store.getSession(id, scopeOf(principal));
  if (session === undefined || !isOwnedBy(session, principal)) throw notFound(id);
  return session;
}

/**
 * Opens an existing session branch for `principal` (waits while a turn runs on it in this process).
 * @throws {NotFoundError} when the session or branch does not exist for this principal
 */
export async function openSession(
  workflow: HandoffWorkflow,
  principal: Principal,
  id: string,
  branch: string = MAIN_BRANCH,
): Promise<HandoffSession> {
  await sessionDocument(workflow, principal, id);
  const session = await workflow.session({ id, branch, create: false, ...scopeOf(principal) });
  if (!isOwnedBy(session.info, principal)) throw notFound(id);
  return session;
}

/**
 * Creates a session for `principal` (its tenant and user), with `id` or a new one.
 * @throws {InvalidInputError} (400) when `metadata` breaks the store's key rules (`$where`, `a.b`,
 *   `__proto__`, `constructor`, `prototype` at any depth), naming the key; `NestingTooDeepError`
 *   (an `InvalidInputError`, 400) when it nests deeper than `MAX_METADATA_DEPTH`;
 *   {@link ConcurrencyError} (409) when the id is taken (by anyone: whose it is is not told)
 */
export async function createSession(
  workflow: HandoffWorkflow,
  principal: Principal,
  id: string,
  metadata: Record<string, unknown> | undefined,
): Promise<HandoffSession> {
  const taken = () =>
    new ConcurrencyError(
      `Session id ${JSON.stringify(id)} is taken; choose another id, or leave id out and the server makes one.`,
    );
  // The store checks it too; checked first here so that a bad body is never answered as a taken id.
  if (metadata !== undefined) assertSafeMetadata('metadata', metadata);
  if ((await workflow.config.store.getSession(id, scopeOf(principal))) !== undefined) throw taken();
  try {
    return await workflow.session({
      id,
      ...scopeOf(principal),
      ...(principal.userId === undefined ? {} : { userId: principal.userId }),
      ...(metadata === undefined ? {} : { metadata }),
    });
  } catch (error) {
    if (await takenByAnother(workflow, principal, id, error)) throw taken();
    throw error;
  }
}

/**
 * Whether opening the session failed because someone else holds `id`: another tenant (the workflow
 * refuses it with an INVALID_INPUT caused by the store's CONCURRENCY), or another user who created
 * it since the check above (it now exists for this tenant). Any other INVALID_INPUT is the caller's.
 */
async function takenByAnother(
  workflow: HandoffWorkflow,
  principal: Principal,
  id: string,
  error: unknown,
): Promise<boolean> {
  if (codeOf(error) !== 'INVALID_INPUT') return false;
  if (codeOf((error as { cause?: unknown }).cause) === 'CONCURRENCY') return true;
  return (await workflow.config.store.getSession(id, scopeOf(principal))) !== undefined;
}

function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/** The fields of a session document every view shows. */
function documentView(info: Session) {
  return {
    id: info.id,
    ...(info.tenantId === undefined ? {} : { tenantId: info.tenantId }),
    ...(info.userId === undefined ? {} : { userId: info.userId }),
    status: info.status,
    createdAt: info.createdAt,
    lastActivityAt: info.lastActivityAt,
    ...(info.closedReason === undefined ? {} : { closedReason: info.closedReason }),
    metadata: info.metadata,
  };
}

/**
 * What `GET /sessions/:id` answers: the session document, the branch's routing state, pending requests
 * and the session's standing approvals.
 */
export function sessionView(session: HandoffSession, running: boolean) {
  return {
    ...documentView(session.info),
    branchId: session.branchId,
    headSeq: session.messages.at(-1)?.seq ?? 0,
    routingState: session.routingState,
    activeAgent: session.activeAgent,
    pendingRequests: session.pendingRequests,
    approvalGrants: session.approvalGrants,
    running,
  };
}

/**
 * What `GET /sessions/:id` answers while a turn runs on the branch in this process: the session
 * document, `routingState: 'running'`, no pending requests, and `headSeq`, the last message the
 * turn committed so far (follow the rest on `/events`).
 */
export function runningView(info: Session, branchId: string, headSeq: number) {
  return {
    ...documentView(info),
    branchId,
    headSeq,
    routingState: 'running' as const,
    pendingRequests: [],
    approvalGrants: approvalGrantsOf(info.state),
    running: true,
  };
}
