/** Errors for operations the session's current state does not allow: closed, branched, paused. */
import { BatonErrorCode, BatonError, type BatonErrorOptions } from './batonError.js';

/** The session is closed; it accepts no more turns. */
export class SessionClosedError extends BatonError {
  readonly code = BatonErrorCode.SESSION_CLOSED;
}

/** A branch cannot be deleted because forks refer to it; pass `{ recursive: true }` to delete them too. */
export class BranchHasChildrenError extends BatonError {
  readonly code = BatonErrorCode.BRANCH_HAS_CHILDREN;
}

/**
 * A checkpoint cannot be deleted because a paused turn stands on it: it is its branch's newest, and
 * its pending requests and finished tool results are what a resume needs. Delete older checkpoints,
 * or let the turn finish first.
 *
 * @example
 * ```ts
 * try { await store.deleteCheckpoint('chat-1', 'main', newest.id); }
 * catch (error) { if (error instanceof CheckpointInUseError) console.log(error.checkpointId); }
 * ```
 */
export class CheckpointInUseError extends BatonError {
  readonly code = BatonErrorCode.CHECKPOINT_IN_USE;
  constructor(
    readonly checkpointId: string,
    readonly branchId: string,
    options: BatonErrorOptions = {},
  ) {
    super(
      `Checkpoint ${JSON.stringify(checkpointId)} is the newest of branch ${JSON.stringify(branchId)}: a paused turn resumes from it, so it cannot be deleted. Delete an older checkpoint, or finish the turn first.`,
      options,
    );
  }
}

/**
 * A session with several branches was opened without naming one: Baton does not guess which
 * conversation the caller means. `branches` lists the ids to choose from.
 *
 * @example
 * ```ts
 * try { await workflow.session({ id }); }
 * catch (error) { if (error instanceof AmbiguousBranchError) await workflow.session({ id, branch: error.branches[0] }); }
 * ```
 */
export class AmbiguousBranchError extends BatonError {
  readonly code = BatonErrorCode.AMBIGUOUS_BRANCH;
  constructor(
    readonly sessionId: string,
    readonly branches: readonly string[],
    options: BatonErrorOptions = {},
  ) {
    super(
      `Session ${JSON.stringify(sessionId)} has ${branches.length} branches (${branches.map((b) => JSON.stringify(b)).join(', ')}); open it with { branch } naming one of them.`,
      options,
    );
  }
}
