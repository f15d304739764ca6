import type { Session } from '../../../conversation/session.js';
import { DocumentCorruptError, type StoreError } from '../../../errors.js';
import { assertValidId } from '../../../ids.js';
import type { EraseUserInput, EraseUserResult } from '../../store.js';
import { inTenant } from '../../tenantScope.js';
import type { FileEpisodeStore } from '../fileEpisodeStore.js';
import { ownCount, type SessionImage } from '../log/sessionImage.js';
import type { SessionLocks } from '../sessionLock.js';

/** What {@link eraseFileUser} works with: the parts of one `FileStore`. */
export interface FileErasureParts {
  /** Every stored session, and the errors of those that cannot be read. */
  all: () => Promise<{ sessions: Session[]; unreadable: StoreError[] }>;
  /** A session as stored now. */
  read: (id: string) => Promise<SessionImage | undefined>;
  locks: SessionLocks;
  episodes: FileEpisodeStore;
  /** Removes a session's folder (the caller holds its lock). */
  removeSession: (id: string) => Promise<void>;
  /** How many assets a session holds (the caller holds its lock). */
  countAssets: (id: string) => Promise<number>;
}

/**
 * `FileStore.eraseUser`: each session of the user in the tenant is counted and removed under its
 * lock (one atomic rename of its folder, so a crash leaves it whole or gone), then the user's
 * episodes are removed through the owner index (which holds exactly that tenant's and user's).
 * @throws {InvalidIdError} for an unsafe tenant or user id; {@link DocumentCorruptError} after
 *   erasing everything else when a stored session cannot be read (it may be the user's)
 */
export async function eraseFileUser(input: EraseUserInput, parts: FileErasureParts): Promise<EraseUserResult> {
  const userId = assertValidId('user', input?.userId);
  const scope = input.tenantId === undefined ? {} : { tenantId: assertValidId('tenant', input.tenantId) };
  const { locks } = parts;
  const erased: EraseUserResult = { sessions: 0, branches: 0, messages: 0, checkpoints: 0, episodes: 0, assets: 0 };
  const { sessions, unreadable } = await parts.all();
  for (const candidate of sessions) {
    if (candidate.userId !== userId || !inTenant(candidate, scope)) continue;
    await locks.run(candidate.id, async () => {
      const image = await parts.read(candidate.id);
      if (image === undefined || image.session.userId !== userId || !inTenant(image.session, scope)) return; // gone or changed meanwhile
      for (const branch of image.branches.values()) {
        erased.messages += ownCount(branch);
        erased.checkpoints += branch.checkpoints.length;
      }
      const assets = await parts.countAssets(image.session.id);
      await parts.removeSession(image.session.id);
      erased.assets! += assets;
      erased.sessions += 1;
      erased.branches += image.branches.size;
    });
  }
  erased.episodes = await parts.episodes.deleteOwned(scope, userId);
  const [first] = unreadable;
  if (first !== undefined) {
    const named = unreadable.map((error) => error.message).join(' ');
    throw new DocumentCorruptError(
      `eraseUser erased ${erased.sessions} sessions and ${erased.episodes} episodes of user ${JSON.stringify(userId)}, but ${unreadable.length} stored session(s) cannot be read and may hold the user's data: ${named} Restore or delete them, then call eraseUser again.`,
      first instanceof DocumentCorruptError ? first.document : 'session log',
      first instanceof DocumentCorruptError ? first.field : '(root)',
      { cause: first },
    );
  }
  return erased;
}
