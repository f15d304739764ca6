/**
 * Reading and writing the JSON documents of a `FileStore` session: `session.json` and the branch
 * documents, validated on read so a damaged file is reported, never half-used.
 */

import type { Episode } from '../../conversation/episode.js';
import type { Message } from '../../conversation/message.js';
import type { Branch, Session } from '../../conversation/session.js';
import { DocumentCorruptError, NotFoundError } from '../../errors.js';
import { isValidId } from '../../ids.js';
import type { TenantScope } from '../store.js';
import { parseStoredBranch, parseStoredEpisode, parseStoredMessage, parseStoredSession } from '../storedDocuments.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';
import { mapInBatches, readDirNames, readJsonFile, writeFileAtomic } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';
import { readJsonLines } from './jsonLines.js';

/** The error for a valid document found where another belongs (a file moved or copied by hand). */
function misplaced(path: string, field: string, found: unknown, wanted: string): DocumentCorruptError {
  return new DocumentCorruptError(
    `The document ${path} holds ${field} ${JSON.stringify(found)}, not ${JSON.stringify(wanted)}; it was not loaded. Move it back where it belongs.`,
    path,
    field,
  );
}

/** The documents of a `FileStore`, by id. Callers validate ids first (the layout does too). */
export class FileDocuments {
  constructor(readonly layout: FileLayout) {}

  /** Session `id`, or `undefined` when it does not exist. */
  async readSession(id: string): Promise<Session | undefined> {
    const path = this.layout.sessionFile(id);
    const value = await readJsonFile(path);
    if (value === undefined) return undefined;
    const session = parseStoredSession(value, `document ${path}`);
    if (session.id !== id) throw misplaced(path, 'id', session.id, id);
    return session;
  }

  /**
   * Session `id` if it exists in the scope's tenant (see `TenantScope`: no tenant id matches only
   * sessions without one).
   * @throws {NotFoundError} otherwise
   */
  async requireSession(id: string, scope: TenantScope = {}): Promise<Session> {
    assertTenantScope(scope);
    const session = await this.readSession(id);
    if (session === undefined || !inTenant(session, scope)) {
      throw new NotFoundError(`Session ${JSON.stringify(id)} does not exist.`);
    }
    return session;
  }

  /** Writes session.json atomically. */
  async writeSession(session: Session): Promise<void> {
    await writeFileAtomic(this.layout.sessionFile(session.id), JSON.stringify(session));
  }

  /** Branch `branchId` of the session, or `undefined` when it (or the session) does not exist. */
  async readBranch(sessionId: string, branchId: string): Promise<Branch | undefined> {
    const path = this.layout.branchFile(sessionId, branchId);
    const value = await readJsonFile(path);
    if (value === undefined) return undefined;
    const branch = parseStoredBranch(value, `document ${path}`);
    if (branch.id !== branchId) throw misplaced(path, 'id', branch.id, branchId);
    if (branch.sessionId !== sessionId) throw misplaced(path, 'sessionId', branch.sessionId, sessionId);
    return branch;
  }

  /**
   * Branch `branchId` of the session, after checking the session is in the scope's tenant.
   * @throws {NotFoundError} naming the session when it is missing (for this tenant), else the branch
   */
  async requireBranch(sessionId: string, branchId: string, scope: TenantScope = {}): Promise<Branch> {
    await this.requireSession(sessionId, scope);
    const branch = await this.readBranch(sessionId, branchId);
    if (branch !== undefined) return branch;
    throw new NotFoundError(`Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`);
  }

  /** Writes a branch document atomically. */
  async writeBranch(branch: Branch): Promise<void> {
    await writeFileAtomic(this.layout.branchFile(branch.sessionId, branch.id), JSON.stringify(branch));
  }

  /** Every branch of the session: `main` first, then by creation time. */
  async listBranches(sessionId: string): Promise<Branch[]> {
    const ids = (await readDirNames(this.layout.branchesDir(sessionId)))
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter((id) => isValidId(id));
    const branches = (await Promise.all(ids.map((id) => this.readBranch(sessionId, id)))).filter((b): b is Branch => b !== undefined);
    return branches.sort((a, b) => rank(a) - rank(b) || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /** The branch and its ancestors, by id (a missing ancestor is simply absent). */
  async lineage(sessionId: string, branchId: string): Promise<Map<string, Branch>> {
    const found = new Map<string, Branch>();
    let next: string | undefined = branchId;
    while (next !== undefined && !found.has(next)) {
      const branch = await this.readBranch(sessionId, next);
      if (branch === undefined) break;
      found.set(next, branch);
      next = branch.parent?.branchId;
    }
    return found;
  }

  /** The branch's own messages (a torn last line ignored). */
  async readOwnMessages(sessionId: string, branchId: string): Promise<Message[]> {
    return (await readJsonLines(this.layout.messagesFile(sessionId, branchId), parseMessage)).records;
  }

  /** Session ids with a folder in the store (some may be half-created or being deleted). */
  async sessionIds(): Promise<string[]> {
    return (await readDirNames(this.layout.sessionsDir)).filter((name) => isValidId(name));
  }

  /** Every stored session (a folder without `session.json`, half-created or being deleted, is skipped). */
  async allSessions(): Promise<Session[]> {
    const sessions = await mapInBatches(await this.sessionIds(), (id) => this.readSession(id));
    return sessions.filter((s): s is Session => s !== undefined);
  }

  /** Episode `id`, or `undefined` when it does not exist. */
  async readEpisode(id: string): Promise<Episode | undefined> {
    const path = this.layout.episodeFile(id);
    const value = await readJsonFile(path);
    if (value === undefined) return undefined;
    const episode = parseStoredEpisode(value, `document ${path}`);
    if (episode.id !== id) throw misplaced(path, 'id', episode.id, id);
    return episode;
  }

  /** Every stored episode. */
  async allEpisodes(): Promise<Episode[]> {
    const ids = (await readDirNames(this.layout.episodesDir))
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter((id) => isValidId(id));
    const episodes = await mapInBatches(ids, (id) => this.readEpisode(id));
    return episodes.filter((e): e is Episode => e !== undefined);
  }
}

/** Parses a stored message line, as strictly as `appendMessages` checks it. */
export const parseMessage = (value: unknown, document: string): Message => parseStoredMessage(value, document);

const rank = (branch: Branch): number => (branch.parent === undefined ? 0 : 1);
