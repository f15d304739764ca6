import { NotFoundError } from '@baton/core';
import { saveCheckpoint } from '../runtime/checkpointer.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/**
 * Explicit recovery (see `HandoffSession.restore`): loads checkpoint `checkpointId` of the runtime's
 * branch, replays the history committed after it, and saves the result as the newest checkpoint.
 * The caller holds the session's lock.
 *
 * @throws {NotFoundError} when the branch has no such checkpoint; `CheckpointCorruptError` when it is damaged
 */
export async function restoreCheckpoint(runtime: SessionRuntime, checkpointId: string): Promise<void> {
  const manifest = await runtime.config.store.listCheckpoints(runtime.sessionId, runtime.branchId, runtime.scope);
  if (!manifest.some((c) => c.id === checkpointId)) {
    throw new NotFoundError(
      `Branch ${JSON.stringify(runtime.branchId)} has no checkpoint ${JSON.stringify(checkpointId)}; see session.checkpoints().`,
    );
  }
  await runtime.load(checkpointId);
  runtime.noteCheckpoint({ id: checkpointId, step: Math.max(...manifest.map((c) => c.step)) });
  await saveCheckpoint(runtime);
  runtime.noteWrite();
}
