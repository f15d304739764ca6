/** The files of a branch's event log and lease beside its session's log, and the checks their writes share. */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '../../../errors.js';
import type { TenantScope } from '../../store.js';
import { assertBranchId } from '../../storeRules.js';
import { hasErrorCode } from '../fileIo.js';
import type { FileSessions } from '../fileSessions.js';
import { requireBranch } from '../log/logPlans.js';

/** `<session>/events/<branchId>.jsonl`: the branch's event log. */
export const eventsFile = (sessions: FileSessions, sessionId: string, branchId: string) =>
  join(sessions.layout.sessionDir(sessionId), 'events', `${branchId}.jsonl`);
/** `<session>/leases/<branchId>.json`: the branch's lease. */
export const leaseFile = (sessions: FileSessions, sessionId: string, branchId: string) =>
  join(sessions.layout.sessionDir(sessionId), 'leases', `${branchId}.json`);

/** @throws {NotFoundError} when the session (of this tenant) or branch does not exist */
export async function requireBranchOf(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): Promise<void> {
  assertBranchId(branchId);
  await sessions.view(sessionId, async (image) => requireBranch(image, sessionId, branchId, scope));
}

/**
 * Runs a write into the session's folder, which a `deleteSession` (under another lock) may move away
 * at any step: every path is resolved when used, and folders are made without `recursive`, so a
 * write after the move finds no folder (`ENOENT`) instead of making the session's folder again.
 * @throws {NotFoundError} when the session's folder is gone
 */
export async function inSessionFolder<T>(sessionId: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT'))
      throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist (it was deleted).`, {
        cause: error,
      });
    throw error;
  }
}

/** Makes `dir` (a folder of the session's folder) unless it exists; never the session's folder itself. */
export async function makeFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (error) {
    if (!hasErrorCode(error, 'EEXIST')) throw error;
  }
}
