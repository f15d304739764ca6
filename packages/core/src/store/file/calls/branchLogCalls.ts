/**
 * `FileStore`'s event logs, beside the session's log: `<session>/events/<branchId>.jsonl` (one line
 * per appended batch, see `EventLogBatch`); and the removal of a deleted branch's log and lease.
 */
import { type FileHandle, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkEventBatch,
  type EventLogBatch,
  type EventLogEntry,
  type EventLogPage,
  type EventLogPosition,
  type EventLogRetention,
  keptBatches,
  pageOf,
} from '../../eventLog.js';
import type { TenantScope } from '../../store.js';
import { assertBranchId } from '../../storeRules.js';
import { hasErrorCode, writeFileAtomic } from '../fileIo.js';
import type { FileSessions } from '../fileSessions.js';
import { eventsFile, inSessionFolder, leaseFile, makeFolder, requireBranchOf } from './branchFiles.js';

/**
 * The batches of a branch's event log. A line cut off by a crash is ignored: the last one, and one
 * the next append sealed off with a newline (see `appendEvents`), which is not JSON.
 */
async function readBatches(path: string): Promise<EventLogBatch[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return [];
    throw error;
  }
  const lines = text.split('\n');
  lines.pop(); // after the last '\n': empty, or a torn line
  return lines.flatMap((line) => {
    const batch = parseBatch(line);
    return batch === undefined ? [] : [batch];
  });
}

/** A line's batch, or `undefined` for a line a crash tore (sealed off by a later append). */
function parseBatch(line: string): EventLogBatch | undefined {
  try {
    return JSON.parse(line) as EventLogBatch;
  } catch {
    return undefined;
  }
}

/** Where a branch's events file ended when this store last saw it: its inode, size and last position. */
interface EventsTail {
  ino: number;
  size: number;
  last: EventLogPosition | undefined;
  /** Whether the file ends inside a line (a crash tore the last append): the next append seals it off. */
  torn: boolean;
}

/** Per store (its `FileSessions`), the tail of each events file it appended to or checked. */
const tails = new WeakMap<FileSessions, Map<string, EventsTail>>();

const TAIL_CHUNK = 64 * 1024;

/**
 * The last position of the file's last whole batch, read backwards from `size`, and whether the
 * file ends inside a line. Torn lines (the last one, or one sealed off by an append) are skipped.
 */
async function lastPositionOf(
  path: string,
  size: number,
): Promise<{ last: EventLogPosition | undefined; torn: boolean }> {
  const handle = await open(path, 'r');
  try {
    let buffer = Buffer.alloc(0);
    let torn: boolean | undefined;
    let end: number | undefined; // the '\n' that ends the line looked at next
    for (let at = size; at > 0 || (end !== undefined && end > 0); ) {
      if (at > 0) {
        const length = Math.min(TAIL_CHUNK, at);
        at -= length;
        const chunk = Buffer.alloc(length);
        await handle.read(chunk, 0, length, at);
        buffer = Buffer.concat([chunk, buffer]);
        if (end !== undefined) end += length;
      }
      torn ??= buffer.length > 0 && buffer[buffer.length - 1] !== 0x0a;
      end ??= buffer.lastIndexOf(0x0a);
      if (end === -1) {
        end = undefined;
        continue;
      }
      const start = end > 0 ? buffer.lastIndexOf(0x0a, end - 1) : -1;
      if (start === -1 && at > 0) continue; // the line begins further back
      const batch = parseBatch(buffer.subarray(start + 1, end).toString('utf8'));
      if (batch !== undefined) return { last: batch.entries.at(-1)?.position, torn };
      end = start; // a sealed-off torn line: the batch before it
      if (end === -1) break;
    }
    return { last: undefined, torn: torn ?? false };
  } finally {
    await handle.close();
  }
}

/**
 * The branch log's last position. Kept per store, and trusted while the file's inode and size are
 * what this store left: another process that appended (a later lease epoch) or pruned (a new file)
 * changed them, and then only the file's last line is read. So an append costs one `stat`, not a
 * read of the whole log, and a writer whose lease was taken over still sees the newer positions.
 */
async function lastPosition(
  sessions: FileSessions,
  path: string,
): Promise<{ last: EventLogPosition | undefined; size: number; torn: boolean }> {
  let known = tails.get(sessions);
  if (known === undefined) {
    known = new Map();
    tails.set(sessions, known);
  }
  let stats: { ino: number; size: number };
  try {
    stats = await stat(path);
  } catch (error) {
    if (!hasErrorCode(error, 'ENOENT')) throw error;
    known.delete(path);
    return { last: undefined, size: 0, torn: false };
  }
  const tail = known.get(path);
  if (tail !== undefined && tail.ino === stats.ino && tail.size === stats.size) return tail;
  const { last, torn } = await lastPositionOf(path, stats.size);
  known.set(path, { ino: stats.ino, size: stats.size, last, torn });
  return { last, size: stats.size, torn };
}

/**
 * `FileStore.appendEvents`: one line appended and flushed (`fdatasync`); the log is not read (see
 * `lastPosition`). A file that ends inside a line (an append torn by a crash) gets a newline first,
 * so the torn bytes stay a line of their own, skipped on read, instead of corrupting this batch.
 * Under the branch's events lock, like `pruneEvents`: an append to the file a prune has read and is
 * replacing would be lost with it, and two appenders (a writer whose lease was taken over, still
 * writing) would each check its batch against the same last position.
 */
export async function appendEvents(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  entries: readonly EventLogEntry[],
  scope: TenantScope,
): Promise<void> {
  assertBranchId(branchId);
  const path = eventsFile(sessions, sessionId, branchId);
  await underEventsLock(sessions, sessionId, branchId, scope, async () => {
    const { last, size: before, torn } = await lastPosition(sessions, path);
    checkEventBatch(entries, last);
    const first = entries[0]!.position;
    const after: EventLogPosition = last ?? { epoch: first.epoch, seq: first.seq, index: Math.max(0, first.index - 1) };
    const handle = await openForAppend(sessions, sessionId, path);
    try {
      const line = Buffer.from(
        `${torn ? '\n' : ''}${JSON.stringify({ after, entries: [...entries], createdAt: Date.now() } satisfies EventLogBatch)}\n`,
      );
      await handle.write(line);
      await handle.datasync();
      const { ino, size } = await handle.stat();
      // Ours is the last line unless a writer that takes no lock (an older version) appended meanwhile.
      if (size === before + line.length)
        tails.get(sessions)!.set(path, { ino, size, last: entries.at(-1)!.position, torn: false });
      else tails.get(sessions)!.delete(path);
    } finally {
      await handle.close();
    }
  });
}

/**
 * Opens the branch's events file to append, making it (and the session's `events` folder) when
 * missing. Called under the events lock once the branch is checked, so an append racing
 * `deleteBranch` (which removes the file under that lock, after the branch left the session's log)
 * never makes the log of a deleted branch, which a new fork of the same id would read.
 * @throws {NotFoundError} when the session's folder is gone (the session was deleted)
 */
function openForAppend(sessions: FileSessions, sessionId: string, path: string): Promise<FileHandle> {
  return inSessionFolder(sessionId, async () => {
    try {
      return await open(path, 'a');
    } catch (error) {
      if (!hasErrorCode(error, 'ENOENT')) throw error;
    }
    await makeFolder(join(sessions.layout.sessionDir(sessionId), 'events'));
    return open(path, 'a');
  });
}

/** Runs `work` under the branch's events lock (across processes), once the branch is checked under it. */
function underEventsLock<T>(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
  work: () => Promise<T>,
): Promise<T> {
  return sessions.locks.run(
    sessionId,
    async () => {
      await requireBranchOf(sessions, sessionId, branchId, scope);
      return work();
    },
    sessions.layout.eventsLockTarget(sessionId, branchId),
  );
}

/** `FileStore.readEvents`. */
export async function readEvents(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  after: EventLogPosition | undefined,
  scope: TenantScope,
): Promise<EventLogPage> {
  await requireBranchOf(sessions, sessionId, branchId, scope);
  return pageOf(await readBatches(eventsFile(sessions, sessionId, branchId)), after);
}

/**
 * `FileStore.pruneEvents`: the kept batches written to a new file that replaces the log atomically,
 * under the events lock (a replace after `deleteBranch` removed the file would make it again).
 */
export async function pruneEvents(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  retention: EventLogRetention,
  scope: TenantScope,
): Promise<number> {
  assertBranchId(branchId);
  return underEventsLock(sessions, sessionId, branchId, scope, async () => {
    const path = eventsFile(sessions, sessionId, branchId);
    const batches = await readBatches(path);
    const kept = keptBatches(batches, retention, Date.now());
    const dropped = batches.length - kept.length;
    if (dropped === 0) return 0;
    kept[0] = { ...kept[0]!, after: batches[dropped - 1]!.entries.at(-1)!.position };
    await inSessionFolder(sessionId, () =>
      writeFileAtomic(path, kept.map((batch) => `${JSON.stringify(batch)}\n`).join('')),
    );
    return batches.slice(0, dropped).reduce((n, batch) => n + batch.entries.length, 0);
  });
}

/**
 * Removes the lease and event log of branches `deleteBranch` just deleted from the session's log: a
 * lease left behind would be listed as expired (a cut turn to take over) forever. Each under its lock,
 * so a lease change, events file made or prune that saw the branch (each checks under its lock) has
 * written before, and one after sees the branch gone (`NotFoundError`).
 */
export async function removeBranchLogs(
  sessions: FileSessions,
  sessionId: string,
  branchIds: readonly string[],
): Promise<void> {
  for (const branchId of branchIds) {
    const leaseLock = sessions.layout.leaseLockTarget(sessionId, branchId);
    await sessions.locks.run(
      sessionId,
      async () => {
        await rm(leaseFile(sessions, sessionId, branchId), { force: true });
        sessions.locks.removeHeld(sessionId, leaseLock);
      },
      leaseLock,
    );
    const eventsLock = sessions.layout.eventsLockTarget(sessionId, branchId);
    await sessions.locks.run(
      sessionId,
      async () => {
        await rm(eventsFile(sessions, sessionId, branchId), { force: true });
        sessions.locks.removeHeld(sessionId, eventsLock);
      },
      eventsLock,
    );
  }
}
