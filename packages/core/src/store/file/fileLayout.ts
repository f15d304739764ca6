import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InvalidIdError } from '../../errors.js';
import { assertValidId } from '../../ids.js';
import { assertBranchId, assertSessionId } from '../storeRules.js';

/**
 * Where `FileStore` keeps each document under its root directory:
 *
 * ```
 * <root>/sessions/<sessionId>/log.jsonl     (format version 2: the session log, see sessionLog.ts)
 *                            /log.index.json  (where things are in the log, see logIndex.ts)
 *                            /assets/<assetId>.bin, <assetId>.json  (an uploaded file's bytes and reference)
 * <root>/sessions/<sessionId>/session.json  (format version 1, read and migrated on the first write:)
 *                            /branches/<branchId>.json
 *                            /messages/<branchId>.jsonl
 *                            /checkpoints/<branchId>/<000000000001>-<checkpointId>.json (+ .pending.jsonl)
 * <root>/episodes/<episodeId>.json
 * <root>/episodes/by-owner/<tenantId|->/<userId|->/<episodeId>.json   (hard links: the owner index)
 * <root>/locks/<sessionId>.lock      (locked while a session is written: a kernel lock of this file, see sessionLock.ts)
 * <root>/trash/                       (sessions being deleted)
 * ```
 *
 * Every id is validated before it becomes part of a path, and every resulting path is checked to
 * stay inside its folder, so no id can name a file outside the root.
 */
export class FileLayout {
  readonly root: string;
  readonly sessionsDir: string;
  readonly episodesDir: string;
  readonly locksDir: string;
  readonly trashDir: string;
  /** The checked paths of sessions asked for lately (a session's calls ask for them several times each). */
  readonly #sessionPaths = new Map<string, SessionPaths>();

  /** @param directory the store's root folder (relative paths resolve against the working directory) */
  constructor(directory: string) {
    this.root = resolve(directory);
    this.sessionsDir = join(this.root, 'sessions');
    this.episodesDir = join(this.root, 'episodes');
    this.locksDir = join(this.root, 'locks');
    this.trashDir = join(this.root, 'trash');
  }

  /**
   * The folder of session `id`.
   * @throws {InvalidIdError} for an unsafe id
   */
  sessionDir(id: string): string {
    return this.#paths(id).sessionDir;
  }

  /** `<session>/log.jsonl`: the session log (format version 2). */
  logFile(id: string): string {
    return this.#paths(id).logFile;
  }

  /** `<session>/log.index.json`: the index of the session log (rebuilt from the log when missing or stale). */
  logIndexFile(id: string): string {
    return this.#paths(id).logIndexFile;
  }

  /** `<session>/assets`: the session's uploaded files (see `assetCalls.ts`). */
  assetsDir(sessionId: string): string {
    return join(this.sessionDir(sessionId), 'assets');
  }

  /**
   * `<session>/assets/<assetId>.<kind>`: an asset's bytes (`bin`) or its reference (`json`).
   * @throws {InvalidIdError} for an unsafe session or asset id
   */
  assetFile(sessionId: string, assetId: string, kind: 'bin' | 'json'): string {
    return inside(this.assetsDir(sessionId), `${assertValidId('asset', assetId)}.${kind}`, 'asset', assetId);
  }

  /** The paths of session `id`, checked once and remembered (the most recent {@link SESSION_PATHS_KEPT} sessions). */
  #paths(id: string): SessionPaths {
    const known = this.#sessionPaths.get(id);
    if (known !== undefined) return known;
    const sessionDir = inside(this.sessionsDir, assertSessionId(id), 'session', id);
    const paths: SessionPaths = {
      sessionDir,
      logFile: join(sessionDir, 'log.jsonl'),
      logIndexFile: join(sessionDir, 'log.index.json'),
      lockTarget: inside(this.locksDir, id, 'session', id),
    };
    if (this.#sessionPaths.size >= SESSION_PATHS_KEPT)
      this.#sessionPaths.delete(this.#sessionPaths.keys().next().value!);
    this.#sessionPaths.set(id, paths);
    return paths;
  }

  /** `<session>/session.json` (format version 1). */
  sessionFile(id: string): string {
    return join(this.sessionDir(id), 'session.json');
  }

  /** `<session>/branches`. */
  branchesDir(sessionId: string): string {
    return join(this.sessionDir(sessionId), 'branches');
  }

  /** `<session>/branches/<branchId>.json`. */
  branchFile(sessionId: string, branchId: string): string {
    return inside(this.branchesDir(sessionId), `${assertBranchId(branchId)}.json`, 'branch', branchId);
  }

  /** `<session>/messages`. */
  messagesDir(sessionId: string): string {
    return join(this.sessionDir(sessionId), 'messages');
  }

  /** `<session>/messages/<branchId>.jsonl`: the branch's own messages, one JSON object per line. */
  messagesFile(sessionId: string, branchId: string): string {
    return inside(this.messagesDir(sessionId), `${assertBranchId(branchId)}.jsonl`, 'branch', branchId);
  }

  /** `<session>/checkpoints`. */
  checkpointsRoot(sessionId: string): string {
    return join(this.sessionDir(sessionId), 'checkpoints');
  }

  /** `<session>/checkpoints/<branchId>`: the branch's checkpoint documents and pending writes. */
  checkpointsDir(sessionId: string, branchId: string): string {
    return inside(this.checkpointsRoot(sessionId), assertBranchId(branchId), 'branch', branchId);
  }

  /** `<root>/episodes/<id>.json`. */
  episodeFile(id: string): string {
    return inside(this.episodesDir, `${assertValidId('episode', id)}.json`, 'episode', id);
  }

  /** `<root>/episodes/by-owner`: the owner index of episodes. */
  get episodeIndexDir(): string {
    return join(this.episodesDir, 'by-owner');
  }

  /** The index path segments of an owner: the tenant and user ids, `-` for an absent one (no valid id is `-`). */
  episodeOwnerPath(tenantId: string | undefined, userId: string | undefined): [string, string] {
    return [
      tenantId === undefined ? '-' : assertValidId('tenant', tenantId),
      userId === undefined ? '-' : assertValidId('user', userId),
    ];
  }

  /**
   * `<root>/episodes/by-owner/<tenant>/<user>`, or the tenant's folder with `tenantOnly`.
   * @throws {InvalidIdError} for an unsafe tenant or user id
   */
  episodeOwnerDir(
    tenantId: string | undefined,
    userId: string | undefined,
    options: { tenantOnly?: boolean } = {},
  ): string {
    const [tenant, user] = this.episodeOwnerPath(tenantId, userId);
    const tenantDir = join(this.episodeIndexDir, tenant);
    return options.tenantOnly ? tenantDir : join(tenantDir, user);
  }

  /** The path of session `id`'s lock (its lock file, or a folder lock's folder, is this path plus `.lock`). */
  lockTarget(id: string): string {
    return this.#paths(id).lockTarget;
  }

  /**
   * The path locked while branch `branchId`'s lease of session `id` changes: apart from the session's
   * write lock, so a takeover is not held up by a dead writer's lock (`@` is in no id, so no session's
   * own lock is named alike).
   */
  leaseLockTarget(id: string, branchId: string): string {
    return `${this.#paths(id).lockTarget}@lease@${branchId}`;
  }

  /**
   * The path locked while branch `branchId`'s events file is appended to, made, pruned or removed:
   * apart from the lease's, so a writer killed there delays no takeover.
   */
  eventsLockTarget(id: string, branchId: string): string {
    return `${this.#paths(id).lockTarget}@events@${branchId}`;
  }
}

/** How many sessions' paths a {@link FileLayout} remembers (the oldest asked for first is forgotten). */
const SESSION_PATHS_KEPT = 1024;

/** The paths of one session, each checked to stay inside its folder. */
interface SessionPaths {
  sessionDir: string;
  logFile: string;
  logIndexFile: string;
  lockTarget: string;
}

/** `join(parent, name)`, refusing anything that would not be a direct child of `parent`. */
function inside(parent: string, name: string, kind: string, id: string): string {
  const path = resolve(parent, name);
  const rel = relative(parent, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.includes(sep)) throw new InvalidIdError(kind, id);
  return path;
}
