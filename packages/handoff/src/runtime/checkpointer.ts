import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  type CheckpointManifestEntry,
  type CheckpointRetention,
  createId,
  isoNow,
} from '@baton/core';
import type { CheckpointKeep } from '../config/handoffTypes.js';
import type { SessionRuntime } from './sessionRuntime.js';
import { type DurableWrites, writeToStore } from './storeWriter.js';

/**
 * Saves a checkpoint of where the runtime's turn stands: the routing machine's persisted snapshot,
 * `throughSeq` (the branch head), pending requests, pending writes and the state patches of the
 * unfinished turn. It holds no messages, so its size does not grow with the conversation
 * (docs/architecture.md invariant 2). Messages committed but not stored yet are stored with it, in
 * one store write before it ({@link writeToStore}), so `throughSeq` never points past the stored history;
 * `writes` (a settled turn's state and session change) join that write, and the checkpoint then
 * holds no state patches. A `checkpoint` event is raised on the runtime (the running turn streams it).
 *
 * At a prune point (`prunePoint`: a turn's end, a pause, a close) a prune that is due once this
 * checkpoint is saved ({@link pruneCheckpoints}) joins the same write (`StoreBatch.pruneCheckpoints`),
 * so a turn that prunes is still one durable write; the prune call after it then finds nothing due.
 *
 * @returns the manifest entry of the saved checkpoint
 * @throws {ConcurrencyError} when another writer took one of the buffered messages' seqs (see {@link writeToStore})
 * @throws {StoreError} (or what the store throws) when a write fails
 */
export function saveCheckpoint(
  runtime: SessionRuntime,
  writes: Omit<DurableWrites, 'checkpoint' | 'pruneCheckpoints'> = {},
  prunePoint = false,
): Promise<CheckpointManifestEntry> {
  // Not an async function (one `then` instead of an async function's state and an await); a throw still rejects.
  try {
    // A write that settles the state leaves the checkpoint no state patches to hold.
    const checkpoint = buildCheckpoint(runtime, writes.sessionChange !== undefined || writes.branchState !== undefined);
    // `{ ...writes, checkpoint }` built in steps: V8 runs a spread followed by more keys in a slow path.
    const durable: DurableWrites = { checkpoint };
    if (writes.sessionChange !== undefined) durable.sessionChange = writes.sessionChange;
    if (writes.branchState !== undefined) durable.branchState = writes.branchState;
    const now = Date.now();
    const retention = prunePoint ? retentionDue(runtime, checkpoint.step, now) : undefined;
    if (retention !== undefined) durable.pruneCheckpoints = retention;
    return writeToStore(runtime, durable).then(() => {
      const entry = recordCheckpoint(runtime, checkpoint);
      if (retention !== undefined) notePruned(clockOf(runtime), now);
      return entry;
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Makes a finished turn durable with one store write ({@link writeToStore}): the turn's messages not
 * stored yet, the state changed during the turn (branch and session documents; the session's
 * `lastActivityAt` moves on every turn) and the turn-end checkpoint (unless checkpoints are
 * `'manual'`), which holds no state patches since the state is settled by the same write, and a prune
 * of old checkpoints when one is due ({@link pruneCheckpoints}; with `'manual'` checkpoints, a separate
 * write after it). Then the patches are cleared.
 * On a store without `writeBatch` the messages go first: a load compares `lastActivityAt` with the
 * stored answer to tell whether the state was saved.
 *
 * @throws {ConcurrencyError} when another writer took one of the turn's seqs or changed the session
 *   or branch document; the runtime reloads on the next call
 */
export function settleTurn(runtime: SessionRuntime): Promise<void> {
  // Not an async function (one `then` instead of an async function's state and two awaits); a throw still rejects.
  try {
    const { patches } = runtime.state;
    const writes: DurableWrites = { sessionChange: { lastActivityAt: isoNow() } };
    if (patches.session.length > 0) writes.sessionChange!.state = runtime.state.session;
    if (patches.branch.length > 0) writes.branchState = runtime.state.branch;
    const written =
      runtime.config.checkpointEvery !== 'manual'
        ? saveCheckpoint(runtime, writes, true)
        : writeToStore(runtime, writes);
    return written.then(() => {
      runtime.state.clearPatches();
      runtime.noteSettled();
      return pruneCheckpoints(runtime);
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The checkpoint of where the runtime's turn stands now, with the branch head as `throughSeq` (and no state patches when `settled`). */
function buildCheckpoint(runtime: SessionRuntime, settled: boolean): Checkpoint {
  const checkpoint: Checkpoint = {
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
    id: createId(),
    parentId: runtime.checkpoint?.id ?? null,
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    step: (runtime.checkpoint?.step ?? 0) + 1,
    createdAt: isoNow(),
    throughSeq: runtime.history.headSeq,
    machine: runtime.actor.persist(),
    pendingRequests: [...runtime.pendingRequests],
    pendingWrites: [...runtime.pendingWrites.values()],
    statePatches: settled
      ? { session: [], branch: [] }
      : { session: [...runtime.state.patches.session], branch: [...runtime.state.patches.branch] },
  };
  if (runtime.traceparent !== undefined) checkpoint.traceparent = runtime.traceparent;
  return checkpoint;
}

/** Makes a stored checkpoint the runtime's newest: the prune cadence and the `checkpoint` event. */
function recordCheckpoint(runtime: SessionRuntime, checkpoint: Checkpoint): CheckpointManifestEntry {
  runtime.noteCheckpoint(
    checkpoint.traceparent === undefined
      ? { id: checkpoint.id, step: checkpoint.step }
      : { id: checkpoint.id, step: checkpoint.step, traceparent: checkpoint.traceparent },
  );
  notePruneDue(runtime, checkpoint.step);
  const entry: CheckpointManifestEntry = {
    id: checkpoint.id,
    parentId: checkpoint.parentId,
    step: checkpoint.step,
    throughSeq: checkpoint.throughSeq,
    createdAt: checkpoint.createdAt,
  };
  runtime.raise({ type: 'checkpoint', sessionId: runtime.sessionId, branchId: runtime.branchId, checkpoint: entry });
  return entry;
}

/** The store retention of a `keep` option; `undefined` for `'all'` (nothing is pruned). */
export function retentionOf(keep: CheckpointKeep): CheckpointRetention | undefined {
  if (keep === 'all') return undefined;
  if (keep === 'latest') return { last: 1 };
  return keep;
}

/** The least time between two age-based prunes of one session object, in milliseconds. */
const MIN_AGE_PRUNE_INTERVAL_MS = 1000;

/** Per session object: whether a count-based prune is due, and when it last pruned (`Date.now()` ms). */
interface PruneClock {
  due: boolean;
  lastAt: number | undefined;
}

const clocks = new WeakMap<SessionRuntime, PruneClock>();

function clockOf(runtime: SessionRuntime): PruneClock {
  let clock = clocks.get(runtime);
  if (clock === undefined) {
    clock = { due: false, lastAt: undefined };
    clocks.set(runtime, clock);
  }
  return clock;
}

/** With `{ last: N }`, a checkpoint whose step is a multiple of N makes the next prune due. */
function notePruneDue(runtime: SessionRuntime, step: number): void {
  const retention = retentionOf(runtime.config.checkpointKeep);
  if (retention?.last !== undefined && step % retention.last === 0) clockOf(runtime).due = true;
}

/**
 * Deletes the branch's checkpoints outside the workflow's retention (the newest is always kept),
 * amortised so that most turns read and delete nothing:
 * - `{ last: N }` (and `'latest'`, N = 1): prunes once every N checkpoints, at the first prune
 *   point after a checkpoint whose `step` is a multiple of N. Right after a prune N remain, so the
 *   branch holds at most 2N − 1 between prunes (plus those saved since, in the turn that prunes).
 *   Steps are stored, so the cadence survives reloads and restarts.
 * - `{ maxAgeMs }`: prunes at most once per max(1 s, maxAgeMs / 10) per session object, and at its
 *   first prune point after it was opened.
 * The prune points are a turn's end, a pause and a close: there a due prune joins the checkpoint's
 * write ({@link saveCheckpoint} with `prunePoint`), and this call prunes after a turn settled without
 * a checkpoint (`'manual'` checkpoints).
 *
 * @throws {StoreError} (or what the store throws) when the prune fails
 */
export function pruneCheckpoints(runtime: SessionRuntime): Promise<void> {
  // Not an async function: most turns prune nothing, and get a resolved promise without an async function's state.
  const now = Date.now();
  const retention = retentionDue(runtime, undefined, now);
  if (retention === undefined) return NOTHING_TO_PRUNE;
  return prune(runtime, retention, clockOf(runtime), now);
}

/**
 * The retention to prune with now (`now`: `Date.now()` ms), or `undefined` when no prune is due
 * (see {@link pruneCheckpoints}); `savingStep`: the step of a checkpoint about to be saved with the
 * prune, which may make a count-based prune due.
 */
function retentionDue(
  runtime: SessionRuntime,
  savingStep: number | undefined,
  now: number,
): CheckpointRetention | undefined {
  const retention = retentionOf(runtime.config.checkpointKeep);
  if (retention === undefined) return undefined;
  const clock = clockOf(runtime);
  const countDue =
    clock.due || (savingStep !== undefined && retention.last !== undefined && savingStep % retention.last === 0);
  const ageDue =
    retention.maxAgeMs !== undefined &&
    (clock.lastAt === undefined || now - clock.lastAt >= Math.max(MIN_AGE_PRUNE_INTERVAL_MS, retention.maxAgeMs / 10));
  return countDue || ageDue ? retention : undefined;
}

/** A prune was stored at `now` (`Date.now()` ms): none is due until the next prune point of the cadence. */
function notePruned(clock: PruneClock, now: number): void {
  clock.due = false;
  clock.lastAt = now;
}

/** What {@link pruneCheckpoints} returns when no prune is due. */
const NOTHING_TO_PRUNE: Promise<void> = Promise.resolve();

async function prune(
  runtime: SessionRuntime,
  retention: CheckpointRetention,
  clock: PruneClock,
  now: number,
): Promise<void> {
  await runtime.config.store.pruneCheckpoints(runtime.sessionId, runtime.branchId, retention, runtime.scope);
  notePruned(clock, now);
}
