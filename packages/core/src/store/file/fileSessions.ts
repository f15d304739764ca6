import { randomUUID } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session } from '../../conversation/session.js';
import { DocumentCorruptError, type StoreError, UnsupportedSchemaVersionError } from '../../errors.js';
import { isValidId } from '../../ids.js';
import type { TenantScope } from '../store.js';
import { assertSessionId } from '../storeRules.js';
import { assertTenantScope } from '../tenantScope.js';
import type { FileDocuments } from './fileDocuments.js';
import { fsyncDir, mapInBatches, readDirNames } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';
import type { LogOp } from './log/logOps.js';
import { requireSession } from './log/logPlans.js';
import type { SessionImage } from './log/sessionImage.js';
import { type ImageLoader, SessionLogs, type SessionLogsOptions } from './log/sessionLogs.js';
import type { SessionLocks } from './sessionLock.js';

/**
 * How a write decides its operations: from the image under the session lock (throw to refuse;
 * nothing is written), reading first what it needs of the image through `load`.
 */
export type WritePlan = (image: SessionImage, load: ImageLoader) => LogOp[] | Promise<LogOp[]>;

/**
 * The sessions of one `FileStore` and the two ways to touch one: {@link view} reads it as stored
 * now, {@link write} appends one line to its log under its lock. The store's calls (`fileStore.ts`,
 * `sessionCalls.ts`, `messageCalls.ts`, `branchCalls.ts`, `checkpointCalls.ts`) are built on these.
 */
export class FileSessions {
  readonly layout: FileLayout;
  readonly locks: SessionLocks;
  readonly logs: SessionLogs;

  constructor(docs: FileDocuments, locks: SessionLocks, options: SessionLogsOptions) {
    this.layout = docs.layout;
    this.locks = locks;
    this.logs = new SessionLogs(docs, options);
  }

  /** Runs `use` on the session as stored now (see `SessionLogs.view`); the id is checked first. */
  view<T>(sessionId: string, use: (image: SessionImage | undefined, load: ImageLoader) => Promise<T>): Promise<T> {
    return this.logs.view(assertSessionId(sessionId), use);
  }

  /**
   * One write to a session: under its lock, the log brought up to date (a version 1 folder
   * migrated), `plan` decides the operations from the image, they are appended as one line, and
   * `result` reads the image after the write.
   * @throws {NotFoundError} when the session does not exist (for the scope's tenant)
   */
  async write<T>(
    sessionId: string,
    scope: TenantScope,
    plan: WritePlan,
    result: (image: SessionImage) => T,
  ): Promise<T> {
    assertSessionId(sessionId);
    assertTenantScope(scope);
    let upkeep = false;
    const answer = await this.locks.run(sessionId, async () => {
      let log = await this.logs.forWrite(sessionId);
      const image = requireSession(log?.image, sessionId, scope);
      const ops = await plan(image, this.logs.loader(log!));
      if (ops.length > 0) ({ log, upkeep } = await this.logs.append(sessionId, log!, ops));
      return result(log!.image);
    });
    // Compacted, or indexed, after the write returns, in the lock's queue (the next write of the
    // session waits for it, `close()` too): the write is durable already, and both are linear in the session.
    if (upkeep) void this.locks.run(sessionId, () => this.logs.maintain(sessionId)).catch(() => undefined);
    return answer;
  }

  /**
   * Every stored session (a folder holding no session, half-created or being deleted, is skipped),
   * and apart, the sessions that cannot be read (a damaged log, or one of a newer format), so one
   * damaged session does not hide the others.
   */
  async all(): Promise<{ sessions: Session[]; unreadable: StoreError[] }> {
    const ids = (await readDirNames(this.layout.sessionsDir)).filter((name) => isValidId(name));
    const sessions: Session[] = [];
    const unreadable: StoreError[] = [];
    await mapInBatches(ids, async (id) => {
      try {
        const image = await this.logs.read(id);
        if (image !== undefined) sessions.push(image.session);
      } catch (error) {
        if (!(error instanceof DocumentCorruptError || error instanceof UnsupportedSchemaVersionError)) throw error;
        unreadable.push(error);
      }
    });
    return { sessions, unreadable };
  }

  /**
   * Moves the session's folder to the trash (one atomic rename), then removes it, and the files of its
   * locks (the session's, and each branch's lease and events locks, each taken first). Caller holds the
   * session's lock.
   */
  async remove(id: string): Promise<void> {
    const branchIds = await this.logs.read(id).then(
      (image) => [...(image?.branches.keys() ?? [])],
      () => [], // a damaged log is removed all the same
    );
    const trash = join(this.layout.trashDir, `${id}.${randomUUID()}`);
    await rename(this.layout.sessionDir(id), trash);
    await fsyncDir(this.layout.sessionsDir);
    this.logs.forget(id);
    await rm(trash, { recursive: true, force: true });
    this.locks.removeHeld(id);
    for (const branchId of branchIds)
      for (const target of [this.layout.leaseLockTarget(id, branchId), this.layout.eventsLockTarget(id, branchId)])
        await this.locks.run(id, async () => this.locks.removeHeld(id, target), target);
  }
}
