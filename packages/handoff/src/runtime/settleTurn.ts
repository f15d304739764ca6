import { isoNow } from '@baton/core';
import type { SessionRuntime } from './sessionRuntime.js';
import { pruneCheckpoints, saveCheckpoint } from './checkpointer.js';
import { type DurableWrites, persist } from './storeWriter.js';

/**
 * Makes a finished turn durable with one store write ({@link persist}): the turn's messages not
 * stored yet, the state changed during the turn (branch and session documents; the session's
 * `lastActivityAt` moves on every turn) and the turn-end checkpoint (unless checkpoints are
 * `'manual'`), which holds no state patches since the state is settled by the same write. Then the
 * patches are cleared and old checkpoints are pruned when a prune is due ({@link pruneCheckpoints}).
 * On a store without `writeBatch` the messages go first: a load compares `lastActivityAt` with the
 * stored answer to tell whether the state was saved.
 *
 * @throws {ConcurrencyError} when another writer took one of the turn's seqs or changed the session
 *   or branch document; the runtime reloads on the next call
 */
export function settleTurn(runtime: SessionRuntime): Promise<void> {
  // Not an async function (one `then` instead of an async function's state and two awaits); a throw still rejects.
  try {
    const { patches } = runtime.state;
    const writes: DurableWrites = { sessionChange: { lastActivityAt: isoNow() } };
    if (patches.session.length > 0) writes.sessionChange!.state = runtime.state.session;
    if (patches.branch.length > 0) writes.branchState = runtime.state.branch;
    const written = runtime.config.checkpointEvery !== 'manual' ? saveCheckpoint(runtime, writes) : persist(runtime, writes);
    return written.then(() => {
      runtime.state.clearPatches();
      runtime.unsettled.persistState = false;
      return pruneCheckpoints(runtime);
    });
  } catch (error) {
    return Promise.reject(error);
  }
}
