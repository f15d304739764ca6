/**
 * What every store shares about branches: where a branch's messages live (its lineage), which
 * branches a delete takes, and a compare-and-set state change.
 */
import { type Branch, MAIN_BRANCH, type State } from '../conversation/session.js';
import { BranchHasChildrenError, ConcurrencyError, InvalidInputError, NotFoundError } from '../errors.js';
import type { ReadMessagesOptions } from './store.js';

/** One piece of a branch's history: `branch`'s own messages with `fromSeq <= seq <= throughSeq`. */
export interface LineageSegment {
  branch: Branch;
  fromSeq: number;
  throughSeq: number;
}

/**
 * Where a branch's messages live: its ancestors' prefixes (root first) and then its own, each
 * clipped to the requested range. A fork at `atSeq` reads its parent's messages `1..atSeq`.
 *
 * @param getBranch looks a branch of the session up (sync)
 * @throws {NotFoundError} when the branch or an ancestor is missing
 */
export function branchLineage(
  branchId: string,
  getBranch: (id: string) => Branch | undefined,
  sessionId: string,
  options: ReadMessagesOptions = {},
): LineageSegment[] {
  const chain: Branch[] = [];
  let current = getBranch(branchId);
  if (current === undefined)
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`,
    );
  while (current !== undefined) {
    chain.unshift(current);
    if (current.parent === undefined) break;
    const parentId: string = current.parent.branchId;
    current = getBranch(parentId);
    if (current === undefined)
      throw new NotFoundError(
        `Parent branch ${JSON.stringify(parentId)} of session ${JSON.stringify(sessionId)} does not exist.`,
      );
  }
  const from = options.fromSeq ?? 1;
  const through = options.throughSeq ?? Number.POSITIVE_INFINITY;
  const segments: LineageSegment[] = [];
  chain.forEach((branch, index) => {
    const start = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
    const child = chain[index + 1];
    const end = child?.parent === undefined ? Number.POSITIVE_INFINITY : child.parent.atSeq;
    const fromSeq = Math.max(start, from);
    const throughSeq = Math.min(end, through);
    if (fromSeq <= throughSeq) segments.push({ branch, fromSeq, throughSeq });
  });
  return segments;
}

/**
 * The branches a delete takes: `branchId` and, when `recursive`, every fork below it (children first).
 * @throws {InvalidInputError} for `main`; {@link BranchHasChildrenError} when forks refer to it and
 *   `recursive` is not set; {@link NotFoundError} when it does not exist
 */
export function ensureBranchDeletable(
  branchId: string,
  branches: readonly Branch[],
  options: { recursive?: boolean },
): string[] {
  if (branchId === MAIN_BRANCH)
    throw new InvalidInputError('The main branch cannot be deleted; delete the session instead.');
  if (!branches.some((b) => b.id === branchId))
    throw new NotFoundError(`Branch ${JSON.stringify(branchId)} does not exist.`);
  const children = branches.filter((b) => b.parent?.branchId === branchId);
  if (children.length > 0 && !options.recursive) {
    throw new BranchHasChildrenError(
      `Branch ${JSON.stringify(branchId)} has forks (${children.map((c) => c.id).join(', ')}); deleting it would orphan them. Pass { recursive: true } to delete them too.`,
    );
  }
  return [...children.flatMap((c) => ensureBranchDeletable(c.id, branches, { recursive: true })), branchId];
}

/**
 * The branch after a compare-and-set state change (`state` already validated by {@link branchState}).
 * @throws {ConcurrencyError} on a stale version
 */
export function changedBranch(current: Branch, state: State, expectedVersion: number): Branch {
  if (current.version !== expectedVersion) {
    throw new ConcurrencyError(
      `Branch ${JSON.stringify(current.id)} is at version ${current.version}, not ${expectedVersion}. Reload and retry.`,
    );
  }
  return { ...current, state, version: current.version + 1 };
}
