/** `FileStore`'s session calls: create, read, update, list and delete sessions (and a deleted one's episodes). */
import { mkdir, rm } from 'node:fs/promises';
import { type Branch, MAIN_BRANCH, type Session } from '../../../conversation/session.js';
import { ConcurrencyError } from '../../../errors.js';
import { cloneData } from '../../cloneData.js';
import type { CreateSessionInput, SessionChange, SessionFilter, TenantScope, UpdateOptions } from '../../store.js';
import {
  assertSessionChange,
  assertSessionId,
  changedSession,
  matchesSessionFilter,
  newSession,
} from '../../storeRules.js';
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

/** `FileStore.getSession`: the session as stored now, if it is in the scope's tenant. */
export async function getSession(sessions: FileSessions, id: string, scope: TenantScope): Promise<Session | undefined> {
  assertTenantScope(scope);
  const image = await sessions.logs.read(assertSessionId(id));
  return image !== undefined && inTenant(image.session, scope) ? cloneData(image.session) : undefined;
}

/** `FileStore.updateSession`: one log line holding the changed session document. */
export async function updateSession(
  sessions: FileSessions,
  id: string,
  change: SessionChange,
  options: UpdateOptions,
): Promise<Session> {
  assertSessionChange(change);
  return sessions.write(
    id,
    options,
    (image) => [{ op: 'session', session: changedSession(image.session, change, options.expectedVersion) }],
    (image) => cloneData(image.session),
  );
}

/** `FileStore.listSessions`: every readable session matching `filter`, the most recently active first. */
export async function listSessions(sessions: FileSessions, filter: SessionFilter): Promise<Session[]> {
  const found = (await sessions.all()).sessions.filter((s) => matchesSessionFilter(s, filter));
  found.sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
  return (filter.limit === undefined ? found : found.slice(0, filter.limit)).map(cloneData);
}

/** `FileStore.deleteInactiveSessions`: each candidate deleted under its lock, unless it became active meanwhile. */
export async function deleteInactiveSessions(
  sessions: FileSessions,
  options: { idleFor: number; dryRun?: boolean } & TenantScope,
): Promise<string[]> {
  const filter: SessionFilter = { activeBefore: new Date(Date.now() - options.idleFor).toISOString() };
  if (options.tenantId !== undefined) filter.tenantId = options.tenantId;
  const candidates = (await listSessions(sessions, filter)).map((s) => s.id);
  if (options.dryRun) return candidates;
  const deleted: string[] = [];
  for (const id of candidates) {
    const gone = await sessions.locks.run(id, async () => {
      const session = (await sessions.logs.read(id))?.session;
      if (session === undefined || !matchesSessionFilter(session, filter)) return false; // active again meanwhile
      await sessions.remove(id);
      return true;
    });
    if (gone) deleted.push(id);
  }
  return deleted;
}
