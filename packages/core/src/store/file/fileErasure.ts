import { assertValidId } from '../../ids.js';
import { listCheckpointFiles } from './checkpointFiles.js';
import type { FileDocuments } from './fileDocuments.js';
import type { FileEpisodeStore } from './fileEpisodeStore.js';
import type { SessionLocks } from './sessionLock.js';
import type { EraseUserInput, EraseUserResult } from '../store.js';
import { inTenant } from '../tenantScope.js';

/** What {@link eraseFileUser} works with: the parts of one `FileStore`. */
export interface FileErasureParts {
  docs: FileDocuments;
  locks: SessionLocks;
  episodes: FileEpisodeStore;
  /** Removes a session's folder (the caller holds its lock). */
  removeSession: (id: string) => Promise<void>;
}

/**
 * `FileStore.eraseUser`: each session of the user in the tenant is counted and removed under its
 * lock (one atomic rename of its folder, so a crash leaves it whole or gone), then the user's
 * episodes are removed through the owner index (which holds exactly that tenant's and user's).
 * @throws {InvalidIdError} for an unsafe tenant or user id
 */
export async function eraseFileUser(input: EraseUserInput, parts: FileErasureParts): Promise<EraseUserResult> {
  const userId = assertValidId('user', input?.userId);
  const scope = input.tenantId === undefined ? {} : { tenantId: assertValidId('tenant', input.tenantId) };
  const { docs, locks } = parts;
  const erased: EraseUserResult = { sessions: 0, branches: 0, messages: 0, checkpoints: 0, episodes: 0 };
  for (const candidate of await docs.allSessions()) {
    if (candidate.userId !== userId || !inTenant(candidate, scope)) continue;
    await locks.run(candidate.id, async () => {
      const session = await docs.readSession(candidate.id);
      if (session === undefined || session.userId !== userId || !inTenant(session, scope)) return; // gone or changed meanwhile
      const branches = await docs.listBranches(session.id);
      for (const branch of branches) {
        erased.messages += (await docs.readOwnMessages(session.id, branch.id)).length;
        erased.checkpoints += (await listCheckpointFiles(docs.layout.checkpointsDir(session.id, branch.id))).length;
      }
      await parts.removeSession(session.id);
      erased.sessions += 1;
      erased.branches += branches.length;
    });
  }
  erased.episodes = await parts.episodes.deleteOwned(scope, userId);
  return erased;
}
