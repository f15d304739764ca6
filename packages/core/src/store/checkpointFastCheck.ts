import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  CheckpointSchema,
  StatePatchSchema,
} from '../conversation/checkpoint.js';
import { isIsoTimestamp } from '../timestamp.js';
import { cloneData } from './cloneData.js';

/**
 * The fields this check knows, in schema order. When `CheckpointSchema` or `StatePatchSchema` gains
 * or loses a field, the check turns itself off (every checkpoint then goes to zod) until it is updated.
 */
const ENABLED =
  Object.keys(CheckpointSchema.shape).join() ===
    'schemaVersion,id,parentId,sessionId,branchId,step,createdAt,throughSeq,machine,pendingRequests,pendingWrites,statePatches,traceparent' &&
  Object.keys(StatePatchSchema.shape).join() === 'op,path,value';

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const PATCH_OPS: ReadonlySet<unknown> = new Set(['add', 'remove', 'replace']);

/**
 * The checkpoint `CheckpointSchema.parse(value)` would give, deep-copied (sharing no object with
 * `value`), checked without zod for the common shape: no pending requests and no pending writes
 * (a turn-end checkpoint; zod v4 allocates a result per field, a few µs per checkpoint on a store's
 * hot path). `undefined` means "ask zod", which also writes the error message: a checkpoint with
 * pending requests or writes, or one that fails any rule here.
 *
 * @param value what a caller passed as a checkpoint of the current schema version
 * @returns the parsed copy (known keys only, in schema order, as zod returns them), or `undefined`
 */
export function fastCheckpointCopy(value: unknown): Checkpoint | undefined {
  if (!ENABLED || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const c = value as Record<string, unknown>;
  const { pendingRequests, pendingWrites, statePatches, machine, traceparent } = c;
  if (
    c.schemaVersion !== CHECKPOINT_SCHEMA_VERSION ||
    typeof c.id !== 'string' ||
    !(c.parentId === null || typeof c.parentId === 'string') ||
    typeof c.sessionId !== 'string' ||
    typeof c.branchId !== 'string' ||
    !nonNegativeInteger(c.step) ||
    !isIsoTimestamp(c.createdAt) ||
    !nonNegativeInteger(c.throughSeq) ||
    machine === undefined ||
    !Array.isArray(pendingRequests) ||
    pendingRequests.length !== 0 ||
    !Array.isArray(pendingWrites) ||
    pendingWrites.length !== 0 ||
    typeof statePatches !== 'object' ||
    statePatches === null ||
    !(traceparent === undefined || (typeof traceparent === 'string' && TRACEPARENT.test(traceparent)))
  ) {
    return undefined;
  }
  const { session, branch } = statePatches as Record<string, unknown>;
  if (!patches(session) || !patches(branch)) return undefined;
  const copy: Checkpoint = {
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
    id: c.id,
    parentId: c.parentId,
    sessionId: c.sessionId,
    branchId: c.branchId,
    step: c.step as number,
    createdAt: c.createdAt,
    throughSeq: c.throughSeq as number,
    machine: cloneData(machine),
    pendingRequests: [],
    pendingWrites: [],
    statePatches: { session: session.map(copyPatch), branch: branch.map(copyPatch) },
  };
  if (traceparent !== undefined) copy.traceparent = traceparent;
  return copy;
}

function nonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Whether `value` is an array of patches `StatePatchSchema` accepts. */
function patches(value: unknown): value is Record<string, unknown>[] {
  if (!Array.isArray(value)) return false;
  for (const patch of value) {
    if (
      typeof patch !== 'object' ||
      patch === null ||
      Array.isArray(patch) ||
      !PATCH_OPS.has(patch.op) ||
      !Array.isArray(patch.path)
    )
      return false;
    for (const key of patch.path)
      if (typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) return false;
  }
  return true;
}

/** A patch as zod returns it (known keys; `value` only when present), deep-copied. */
function copyPatch(patch: Record<string, unknown>): Checkpoint['statePatches']['session'][number] {
  const copy: Checkpoint['statePatches']['session'][number] = {
    op: patch.op as 'add',
    path: [...(patch.path as (string | number)[])],
  };
  if ('value' in patch) copy.value = cloneData(patch.value);
  return copy;
}
