import { InvalidInputError } from '@baton/core';
import { routingState } from '../routing/routingMachine.js';
import { APPROVAL_GRANTS_KEY, approvalGrantsOf } from '../turn/approvalGrants.js';
import { saveCheckpoint } from '../runtime/checkpointer.js';
import { writeToStore } from '../runtime/storeWriter.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/**
 * Removes the session's standing approval of `toolName`, so its next call asks again. The caller
 * holds the session branch's lock on a loaded runtime. Between turns the session state is written at
 * once (compare-and-set); while a turn is unfinished (paused on a request, interrupted) its state
 * is not settled yet, so the change is saved the way the turn's own changes are: as a state patch of
 * a new checkpoint, after the patch that granted it (a recovery applies both, in order), and the
 * turn's settle writes it.
 *
 * @returns whether the session held a grant for `toolName`
 * @throws {InvalidInputError} when `toolName` is not a non-empty string
 * @throws `ConcurrencyError` when another writer changed the session since it was loaded (nothing was
 *   changed; call again)
 */
export async function revokeApproval(runtime: SessionRuntime, toolName: string): Promise<boolean> {
  if (typeof toolName !== 'string' || toolName === '') {
    throw new InvalidInputError(
      `revokeApproval() takes a tool name (see session.approvalGrants), not ${JSON.stringify(toolName)}.`,
    );
  }
  const grants = approvalGrantsOf(runtime.state.session);
  if (!grants.some((grant) => grant.toolName === toolName)) return false;
  runtime.state.update('session', (draft) => {
    draft[APPROVAL_GRANTS_KEY] = grants.filter((grant) => grant.toolName !== toolName);
  });
  const state = routingState(runtime.snapshot);
  if (state === 'running' || state === 'awaitingRequest') {
    // Outside a turn nobody streams the checkpoint event.
    await saveCheckpoint(runtime);
    return true;
  }
  try {
    await writeToStore(runtime, { sessionChange: { state: runtime.state.session } });
  } finally {
    // Settled (or, after a failed write, to be reloaded: writeToStore marked the runtime stale).
    runtime.state.clearPatches();
  }
  return true;
}
