/**
 * `FileStore`'s branch leases: `<session>/leases/<branchId>.json`, replaced atomically under the
 * branch's lease lock (see `FileLayout.leaseLockTarget`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type BranchLease, type LeaseAcquisition, nextLease } from '../../branchLease.js';
import type { TenantScope } from '../../store.js';
import { assertBranchId } from '../../storeRules.js';
import { assertTenantScope, inTenant, scopeOf } from '../../tenantScope.js';
import { hasErrorCode, writeFileAtomic } from '../fileIo.js';
import type { FileSessions } from '../fileSessions.js';
import { inSessionFolder, leaseFile, makeFolder, requireBranchOf } from './branchFiles.js';

/** The stored lease, or `undefined` when the branch never had one. */
async function readLease(path: string): Promise<BranchLease | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as BranchLease;
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * Runs a compare-and-set of the branch's lease under the branch's lease lock (held across processes),
 * not the session's write lock: a process killed mid-write leaves a folder lock (`lock: 'folder'`)
 * held until it goes stale (`lockStaleMs`), and the takeover's lease must not wait for it (followers
 * of the cut turn see the new lease live while its first write waits). A kernel lock goes with its process.
 */
async function changeLease<T>(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
  change: (current: BranchLease | undefined) => { next?: BranchLease; result: T },
): Promise<T> {
  assertBranchId(branchId);
  const path = leaseFile(sessions, sessionId, branchId);
  return sessions.locks.run(
    sessionId,
    async () => {
      // Checked under the lease lock, and the write fails once the folder is gone: a delete racing
      // this change (under the session's lock) never gets its folder made again (see inSessionFolder).
      await requireBranchOf(sessions, sessionId, branchId, scope);
      const { next, result } = change(await readLease(path));
      if (next !== undefined)
        await inSessionFolder(sessionId, async () => {
          await makeFolder(join(sessions.layout.sessionDir(sessionId), 'leases'));
          await writeFileAtomic(path, JSON.stringify(next));
        });
      return result;
    },
    sessions.layout.leaseLockTarget(sessionId, branchId),
  );
}

/** `FileStore.acquireBranchLease`. */
export function acquireLease(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
): Promise<LeaseAcquisition> {
  const scope = scopeOf(input);
  return changeLease(
    sessions,
    sessionId,
    branchId,
    scope,
    (current): { next?: BranchLease; result: LeaseAcquisition } => {
      const next = nextLease(current, sessionId, branchId, input, Date.now());
      return next === undefined
        ? { result: { acquired: false, lease: current! } }
        : { next, result: { acquired: true, lease: next } };
    },
  );
}

/** `FileStore.renewBranchLease` (with `ttlMs`) and `releaseBranchLease` (without). */
export function changeHeldLease(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  input: { owner: string; epoch: number; ttlMs?: number } & TenantScope,
): Promise<boolean> {
  const scope = scopeOf(input);
  return changeLease(sessions, sessionId, branchId, scope, (current) => {
    if (current === undefined || !current.held || current.owner !== input.owner || current.epoch !== input.epoch)
      return { result: false };
    const next =
      input.ttlMs === undefined
        ? { ...current, held: false }
        : { ...current, expiresAt: new Date(Date.now() + input.ttlMs).toISOString() };
    return { next, result: true };
  });
}

/** `FileStore.getBranchLease`: `undefined` when the session (of this tenant) or branch does not exist. */
export async function getLease(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): Promise<BranchLease | undefined> {
  assertBranchId(branchId);
  assertTenantScope(scope);
  const exists = await sessions.view(
    sessionId,
    async (image) => image !== undefined && inTenant(image.session, scope) && image.branches.has(branchId),
  );
  return exists ? readLease(leaseFile(sessions, sessionId, branchId)) : undefined;
}

/** `FileStore.listExpiredLeases`: every session folder's `leases/`. */
export async function listExpiredLeases(sessions: FileSessions, before: string, limit: number): Promise<BranchLease[]> {
  const expired: BranchLease[] = [];
  const ids = await readdir(sessions.layout.sessionsDir).catch(() => [] as string[]);
  for (const id of ids) {
    const dir = join(sessions.layout.sessionsDir, id, 'leases');
    const files = await readdir(dir).catch(() => [] as string[]);
    for (const file of files.filter((name) => name.endsWith('.json') && !name.startsWith('.'))) {
      const lease = await readLease(join(dir, file)).catch(() => undefined);
      if (lease?.held === true && lease.expiresAt < before) expired.push(lease);
      if (expired.length >= limit) return expired;
    }
  }
  return expired;
}
