import { isoNow, type SessionChange } from '@baton/core';
import { pruneCheckpoints, saveCheckpoint } from './checkpointer.js';
import { flushMessages } from './flushMessages.js';
import type { SessionRuntime } from '../session/sessionRuntime.js';

/**
 * Makes a finished turn durable: the turn's messages not stored yet are stored (one append), state
 * changed during the turn is written to the branch and session documents (the session's
 * `lastActivityAt` moves on every turn), the patches are cleared, the turn-end checkpoint is saved
 * (unless checkpoints are `'manual'`) and old checkpoints are pruned when a prune is due
 * ({@link pruneCheckpoints}). The messages go first: a load compares `lastActivityAt` with the
 * stored answer to tell whether the state was saved.
 *
 * @throws {ConcurrencyError} when another writer took one of the turn's seqs or changed the session
 *   or branch document; the runtime reloads on the next call
 */
export async function settleTurn(runtime: SessionRuntime): Promise<void> {
  await flushMessages(runtime);
  const { store } = runtime.config;
  const { patches } = runtime.state;
  const { scope } = runtime;
  try {
    if (patches.branch.length > 0) {
      runtime.branch = await store.updateBranch(
        runtime.sessionId,
        runtime.branchId,
        { state: runtime.state.branch },
        { ...scope, expectedVersion: runtime.branch.version },
      );
    }
    const change: SessionChange = { lastActivityAt: isoNow() };
    if (patches.session.length > 0) change.state = runtime.state.session;
    runtime.session = await store.updateSession(runtime.sessionId, change, { ...scope, expectedVersion: runtime.session.version });
  } catch (error) {
    runtime.stale = true;
    throw error;
  }
  runtime.noteWrite();
  runtime.state.clearPatches();
  runtime.unsettled.persistState = false;
  if (runtime.config.checkpointEvery !== 'manual') await saveCheckpoint(runtime);
  await pruneCheckpoints(runtime);
}
