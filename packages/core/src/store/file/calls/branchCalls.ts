/** `FileStore`'s branch calls: fork, read, list, update and delete branches of a session. */
import type { Branch, BranchParent, State } from '../../../conversation/session.js';
import { cloneData } from '../../cloneData.js';
import type { TenantScope, UpdateOptions } from '../../store.js';
import { assertBranchId, branchState, changedBranch, ensureBranchDeletable } from '../../storeRules.js';
import { assertTenantScope, inTenant } from '../../tenantScope.js';
import type { FileSessions } from '../fileSessions.js';
import { forkOps, requireBranch, requireSession, sortedBranches } from '../log/logPlans.js';
import { removeBranchLogs } from './branchLogCalls.js';

/** `FileStore.forkBranch`: one `branch` operation (a fork copies no message). */
export async function forkBranch(
  sessions: FileSessions,
  sessionId: string,
  input: { branchId: string; parent: BranchParent; state?: State },
  scope: TenantScope,
): Promise<Branch> {
  const { branchId, parent } = input;
  assertBranchId(branchId);
  assertBranchId(parent.branchId);
  const state = branchState(input.state ?? {});
  let forked: Branch | undefined;
  await sessions.write(
    sessionId,
    scope,
    (image) => {
      const from = requireBranch(image, sessionId, parent.branchId, scope);
      const { ops, branch } = forkOps(image, from, branchId, parent.atSeq, state);
      forked = branch;
      return ops;
    },
    () => undefined,
  );
  return cloneData(forked!);
}

/** `FileStore.getBranch`. */
export async function getBranch(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): Promise<Branch | undefined> {
  assertBranchId(branchId);
  assertTenantScope(scope);
  return sessions.view(sessionId, async (image) => {
    if (image === undefined || !inTenant(image.session, scope)) return undefined;
    const branch = image.branches.get(branchId)?.branch;
    return branch && cloneData(branch);
  });
}

/** `FileStore.listBranches`: `main` first, then by creation time. */
export async function listBranches(sessions: FileSessions, sessionId: string, scope: TenantScope): Promise<Branch[]> {
  return sessions.view(sessionId, async (image) =>
    sortedBranches(requireSession(image, sessionId, scope)).map(cloneData),
  );
}

/** `FileStore.updateBranch`: compare-and-set on the branch's `version`. */
export async function updateBranch(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  change: { state: State },
  options: UpdateOptions,
): Promise<Branch> {
  assertBranchId(branchId);
  const state = branchState(change.state);
  return sessions.write(
    sessionId,
    options,
    (image) => [
      {
        op: 'branch',
        branch: changedBranch(
          requireBranch(image, sessionId, branchId, options).branch,
          state,
          options.expectedVersion,
        ),
      },
    ],
    (image) => cloneData(image.branches.get(branchId)!.branch),
  );
}

/** `FileStore.deleteBranch`: refuses to orphan forks unless `recursive`. */
export async function deleteBranch(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  options: { recursive?: boolean } & TenantScope,
): Promise<void> {
  assertBranchId(branchId);
  let ids: string[] = [];
  await sessions.write(
    sessionId,
    options,
    (image) => {
      ids = ensureBranchDeletable(branchId, sortedBranches(requireSession(image, sessionId, options)), options);
      return [{ op: 'deleteBranches', ids }];
    },
    () => undefined,
  );
  // Then their leases and event logs, which live beside the session's log.
  await removeBranchLogs(sessions, sessionId, ids);
}
