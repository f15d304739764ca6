/**
 * Reading the JSON documents of a `FileStore`: episodes, and the documents of a format 1 session
 * folder (`session.json`, branch documents, messages), validated on read so a damaged file is
 * reported, never half-used.
 */

import type { Episode } from '../../conversation/episode.js';
import type { Message } from '../../conversation/message.js';
import type { Branch, Session } from '../../conversation/session.js';
import { DocumentCorruptError } from '../../errors.js';
import { isValidId } from '../../ids.js';
import { parseStoredBranch, parseStoredEpisode, parseStoredMessage, parseStoredSession } from '../storedDocuments.js';
import { mapInBatches, readDirNames, readJsonFile } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';
import { readJsonLines } from './v1/jsonLines.js';

/** The error for a valid document found where another belongs (a file moved or copied by hand). */
function misplaced(path: string, field: string, found: unknown, wanted: string): DocumentCorruptError {
  return new DocumentCorruptError(
    `The document ${path} holds ${field} ${JSON.stringify(found)}, not ${JSON.stringify(wanted)}; it was not loaded. Move it back where it belongs.`,
    path,
    field,
  );
}

/** The JSON documents of a `FileStore` (episodes; a format 1 session folder's), by id. Callers validate ids first (the layout does too). */
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

  /** Every branch of the session: `main` first, then by creation time. */
  async listBranches(sessionId: string): Promise<Branch[]> {
    const ids = (await readDirNames(this.layout.branchesDir(sessionId)))
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter((id) => isValidId(id));
    const branches = (await Promise.all(ids.map((id) => this.readBranch(sessionId, id)))).filter(
      (b): b is Branch => b !== undefined,
    );
    return branches.sort(
      (a, b) => rank(a) - rank(b) || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id),
    );
  }

  /** The branch's own messages (a torn last line ignored). */
  async readOwnMessages(sessionId: string, branchId: string): Promise<Message[]> {
    return (await readJsonLines(this.layout.messagesFile(sessionId, branchId), parseMessage)).records;
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
