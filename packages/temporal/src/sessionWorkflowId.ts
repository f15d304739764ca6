import { InvalidIdError, isValidId } from '@baton/core';
import type { SessionTarget } from './sessionContract.js';

/**
 * The id of the session workflow of one conversation branch: `baton/<tenant>/<session>/<branch>`
 * (`~` for no tenant). Baton ids never hold `/` or `~`, so two targets never share an id, and one
 * target always maps to the same workflow (a second `send` reaches the running one).
 *
 * @throws {InvalidIdError} for a session, tenant or branch id that is not a Baton id
 * @example
 * ```ts
 * sessionWorkflowId({ sessionId: 'chat-81', tenantId: 'acme' }); // 'baton/acme/chat-81/main'
 * ```
 */
export function sessionWorkflowId(target: SessionTarget): string {
  const branch = target.branch ?? 'main';
  for (const [what, id] of [
    ['session', target.sessionId],
    ['branch', branch],
    ['tenant', target.tenantId],
  ] as const) {
    if (id !== undefined && !isValidId(id)) {
      throw new InvalidIdError(what, id);
    }
  }
  return `baton/${target.tenantId ?? '~'}/${target.sessionId}/${branch}`;
}
