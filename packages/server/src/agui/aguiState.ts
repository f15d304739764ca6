import type { Request, State, StatePatch, TenantScope } from '@baton/core';
import type { HandoffSession, HandoffWorkflow } from '@baton/handoff';
import jsonPatch, { type Operation } from 'fast-json-patch';

/**
 * A Baton session as AG-UI shared state (`STATE_SNAPSHOT`, then `STATE_DELTA`s): the branch's
 * routing (`activeAgent`, `routingState`, `pendingRequests`) and its two kinds of state, `session`
 * (shared by every branch; the standing approvals live there) and `branch` (the branch's own).
 * Read-only for the client: tools change it on the server, and `RunAgentInput.state` is not read.
 */
export interface AguiState {
  /** The agent that acts next (changes with each handoff). */
  activeAgent: string;
  /** `idle`, `awaitingRequest` (paused on the interrupts), `running` or `closed`. */
  routingState: string;
  /** The requests the session waits on: each is an interrupt of the run that raised it. */
  pendingRequests: Request[];
  /** Session-scoped state. */
  session: State;
  /** The branch's state. */
  branch: State;
}

/**
 * RFC 6902 JSON Patch operations for immer patches (the form Baton records every state change in),
 * each path put under `prefix`: `{ op: 'add', path: ['cart', 0], value }` under `['branch']` is
 * `{ op: 'add', path: '/branch/cart/0', value }` (keys escaped as RFC 6901 says: `~` → `~0`, `/` → `~1`).
 *
 * @param patches immer patches (`op` is `add`, `remove` or `replace`; `path` an array of keys)
 * @param prefix the keys the patched document sits under in the larger document
 * @returns the operations, in the same order
 * @example
 * ```ts
 * jsonPatchOf([{ op: 'replace', path: ['step'], value: 2 }], ['branch']); // [{ op: 'replace', path: '/branch/step', value: 2 }]
 * ```
 */
export function jsonPatchOf(patches: readonly StatePatch[], prefix: readonly (string | number)[] = []): Operation[] {
  return patches.map((patch): Operation => {
    const path = `/${[...prefix, ...patch.path].map((key) => jsonPatch.escapePathComponent(String(key))).join('/')}`;
    return patch.op === 'remove' ? { op: 'remove', path } : { op: patch.op, path, value: patch.value };
  });
}

/**
 * The AG-UI state of a session branch as the store has it: the session and branch documents'
 * state, with the changes of a paused turn (which a turn settles into those documents only when it
 * ends; until then they are in the branch's newest checkpoint) applied on top, as a resumed session
 * sees them.
 *
 * @param workflow the workflow whose store keeps the session
 * @param session the session branch, opened (its routing state and pending requests are read from it)
 * @param scope the caller's tenant
 * @returns a fresh {@link AguiState}, safe to change
 * @example
 * ```ts
 * const snapshot = await aguiStateOf(desk, session, { tenantId: 'acme' });
 * ```
 */
export async function aguiStateOf(
  workflow: HandoffWorkflow,
  session: HandoffSession,
  scope: TenantScope,
): Promise<AguiState> {
  const store = workflow.config.store;
  const [stored, branch] = await Promise.all([
    store.getSession(session.id, scope),
    store.getBranch(session.id, session.branchId, scope),
  ]);
  let state: Pick<AguiState, 'session' | 'branch'> = { session: stored?.state ?? {}, branch: branch?.state ?? {} };
  if (session.routingState === 'awaitingRequest' || session.routingState === 'running') {
    const checkpoint = await store.loadCheckpoint(session.id, session.branchId, undefined, scope);
    const unsettled = [
      ...jsonPatchOf(checkpoint?.statePatches.session ?? [], ['session']),
      ...jsonPatchOf(checkpoint?.statePatches.branch ?? [], ['branch']),
    ];
    if (unsettled.length > 0) state = jsonPatch.applyPatch(jsonPatch.deepClone(state), unsettled).newDocument;
  }
  return jsonPatch.deepClone({
    activeAgent: session.activeAgent,
    routingState: session.routingState,
    pendingRequests: [...session.pendingRequests],
    session: state.session,
    branch: state.branch,
  });
}
