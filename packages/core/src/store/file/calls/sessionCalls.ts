/** `FileStore`'s session calls that touch a session's folder: create one, delete one (and its episodes). */
import { mkdir, rm } from 'node:fs/promises';
import { type Branch, MAIN_BRANCH, type Session } from '../../../conversation/session.js';
import { ConcurrencyError } from '../../../errors.js';
import { cloneData } from '../../cloneData.js';
import type { CreateSessionInput, TenantScope } from '../../store.js';
import { assertSessionId, newSession } from '../../storeRules.js';
import { assertTenantScope, inTenant } from '../../tenantScope.js';
import type { FileEpisodeStore } from '../fileEpisodeStore.js';
import { fsyncDir } from '../fileIo.js';
import type { FileSessions } from '../fileSessions.js';

/** `FileStore.createSession`: under the session's lock, a fresh folder holding a new log (session and main branch). */
export async function createSession(sessions: FileSessions, input: CreateSessionInput): Promise<Session> {
  const session = newSession(input);
  const id = session.id;
  const { layout, locks, logs } = sessions;
  return locks.run(id, async () => {
    if ((await logs.read(id)) !== undefined)
      throw new ConcurrencyError(`Session ${JSON.stringify(id)} already exists.`);
    await rm(layout.sessionDir(id), { recursive: true, force: true }); // what a crashed create left
    await mkdir(layout.sessionDir(id), { recursive: true });
    const main: Branch = { id: MAIN_BRANCH, sessionId: id, createdAt: session.createdAt, state: {}, version: 1 };
    // As JSON, as a read of the log gives them back.
    const [stored, branch] = JSON.parse(JSON.stringify([session, main])) as [Session, Branch];
    const log = await logs.create({
      session: stored,
      branches: new Map([[MAIN_BRANCH, { branch, runs: [], checkpoints: [] }]]),
    });
    await fsyncDir(layout.sessionsDir);
    return cloneData(log.image.session);
  });
}

/** `FileStore.deleteSession`: under the session's lock, its episodes, then its folder. */
export async function deleteSession(
  sessions: FileSessions,
  episodes: FileEpisodeStore,
  id: string,
  scope: TenantScope,
): Promise<boolean> {
  assertSessionId(id);
  assertTenantScope(scope);
  return sessions.locks.run(id, async () => {
    const session = (await sessions.logs.read(id))?.session;
    if (session === undefined || !inTenant(session, scope)) return false;
    // Its episodes first (the one named after it, the default id, and any other in its owner's
    // index), so a crash before the folder is gone leaves a session a retried delete finds.
    if ((await episodes.get(id, scope))?.sessionId === id) await episodes.delete(id, scope);
    await episodes.deleteOwned(scope, session.userId, id);
    await sessions.remove(id);
    return true;
  });
}
