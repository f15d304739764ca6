import type { Branch, BranchParent, State } from '../../conversation/session.js';
import { ConcurrencyError, InvalidInputError, NotFoundError } from '../../errors.js';
import { cloneData } from '../cloneData.js';
import type { TenantScope } from '../store.js';
import { assertBranchId, branchState, changedBranch, ensureBranchDeletable } from '../storeRules.js';
import { readRecordMessages } from './inMemoryMessages.js';
import type { SessionRecord } from './inMemoryRecords.js';

/** `InMemoryStore.forkBranch` on the session's record: a new branch of `input.parent` at its `atSeq`. */
export function forkRecordBranch(
  record: SessionRecord,
  sessionId: string,
  input: { branchId: string; parent: BranchParent; state?: State },
  scope: TenantScope,
): Branch {
  assertBranchId(input.branchId);
  assertBranchId(input.parent.branchId);
  if (record.branches.has(input.branchId))
    throw new ConcurrencyError(`Branch ${JSON.stringify(input.branchId)} already exists.`);
  if (!record.branches.has(input.parent.branchId))
    throw new NotFoundError(`Parent branch ${JSON.stringify(input.parent.branchId)} does not exist.`);
  const parentLength = readRecordMessages(record, sessionId, input.parent.branchId, scope).length;
  if (input.parent.atSeq > parentLength) {
    throw new InvalidInputError(
      `Cannot fork at seq ${input.parent.atSeq}: branch ${JSON.stringify(input.parent.branchId)} has ${parentLength} messages.`,
    );
  }
  const branch: Branch = {
    id: input.branchId,
    sessionId,
    parent: { ...input.parent },
    createdAt: new Date().toISOString(),
    state: branchState(input.state ?? {}),
    version: 1,
  };
  record.branches.set(branch.id, branch);
  record.messages.set(branch.id, []);
  return cloneData(branch);
}

/** `InMemoryStore.updateBranch` on the session's record: the branch's new state, if it is still at `expectedVersion`. */
export function updateRecordBranch(
  record: SessionRecord,
  branchId: string,
  change: { state: State },
  expectedVersion: number,
): Branch {
  assertBranchId(branchId);
  const branch = record.branches.get(branchId);
  if (branch === undefined) throw new NotFoundError(`Branch ${JSON.stringify(branchId)} does not exist.`);
  const next = changedBranch(branch, branchState(change.state), expectedVersion);
  record.branches.set(branchId, next);
  return cloneData(next);
}

/** `InMemoryStore.deleteBranch` on the session's record: the branch (and with `recursive` its forks), their messages and checkpoints. */
export function deleteRecordBranch(record: SessionRecord, branchId: string, options: { recursive?: boolean }): void {
  assertBranchId(branchId);
  for (const id of ensureBranchDeletable(branchId, [...record.branches.values()], options)) {
    record.branches.delete(id);
    record.messages.delete(id);
    record.checkpoints.delete(id);
    // Its lease and event log too: a lease left behind would be listed as expired (a cut turn) forever.
    record.leases?.delete(id);
    record.eventLogs?.delete(id);
  }
}
