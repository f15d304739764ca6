/**
 * A `FileStore` session as its log describes it (log format 3, and 2): the session document, each
 * branch with its own messages and its checkpoints in save order. Message bodies and checkpoint
 * documents may stay on disk: each remembers where in the log it is ({@link OpLocation}), and is
 * read from there when a call needs it (`logRanges.ts`), so opening a long session reads only its
 * index and what the call asks for. The log's operations are replayed onto an image by `logApply.ts`.
 */
import { z } from 'zod';
import type { CheckpointManifestEntry } from '../../../conversation/checkpoint.js';
import type { Message } from '../../../conversation/message.js';
import type { Branch, Session } from '../../../conversation/session.js';

/**
 * Where one operation of a session log is stored: the bytes of its JSON, or of its whole line when
 * `op` is set (then the operation is the line's `ops[op]`).
 */
export interface OpLocation {
  /** Byte offset in the log file. */
  offset: number;
  /** Length in bytes. */
  length: number;
  /** The number of the line holding it (the header is line 1), for errors. */
  line: number;
  /** Set when `offset`/`length` span the whole line: the index of the operation in its `ops`. */
  op?: number;
  /**
   * The CRC-32 (`node:zlib` `crc32`) of the bytes at `offset`/`length`, taken when they were
   * written or replayed (and validated); kept in the log index for message runs. A run read back
   * whose bytes still have it is used without validating its messages again.
   */
  crc?: number;
}

/** Consecutive messages of a branch stored by one log operation. */
export interface MessageRun {
  firstSeq: number;
  count: number;
  /** Where the operation is; `undefined` for messages not read from a log (a format 1 folder). */
  at: OpLocation | undefined;
  /**
   * The messages once read (`messages[i].seq === firstSeq + i`), deep-frozen (`readMessages` hands
   * them out without a copy); `undefined` while they are on disk (or in {@link json}).
   */
  messages: readonly Message[] | undefined;
  /**
   * For a run this process appended, until a call reads it: the JSON of its operation as written
   * (`{"op":"messages",…}`, from validated messages), which `loadRuns` parses instead of reading the
   * log, as a checkpoint keeps its {@link CheckpointRecord.documentJson}. A write parses none of its
   * messages back.
   */
  json?: string | undefined;
}

/** A stored checkpoint: its document as written (validated when loaded) and the pending writes appended to it. */
export interface CheckpointRecord {
  id: string;
  /** Its manifest fields; `undefined` when they cannot be read (the checkpoint is left out of the manifest). */
  manifest: CheckpointManifestEntry | undefined;
  /** `manifest.createdAt`, or when it cannot be read, when the checkpoint was saved (for retention by age). */
  createdAt: string;
  /** Whether `document` and `writes` hold what the log holds (else they are read from `documentAt`/`writesAt`). */
  loaded: boolean;
  /**
   * The document as stored; `loadCheckpoint` validates it, so a damaged one blocks only itself.
   * Read it with {@link recordDocument}: a checkpoint this process just wrote keeps the JSON of its
   * operation instead ({@link documentJson}) until a call needs the document.
   */
  document: unknown;
  /** The JSON of the checkpoint operation (`{"op":"checkpoint",…}`) not parsed yet: `document` is its `checkpoint`. */
  documentJson?: string | undefined;
  /** Pending writes appended after the save, as stored (validated when loaded). */
  writes: unknown[];
  /** Where the checkpoint operation is (`undefined` outside a log). */
  documentAt: OpLocation | undefined;
  /** Where each pending-writes operation of it is, in order. */
  writesAt: OpLocation[];
}

/** One branch of a session image. */
export interface BranchImage {
  branch: Branch;
  /** The branch's own messages in runs, oldest first, seqs consecutive from `firstOwnSeq(branch)`. */
  runs: MessageRun[];
  /** In save order, oldest first. */
  checkpoints: CheckpointRecord[];
}

/** A session as its log describes it. */
export interface SessionImage {
  session: Session;
  /** By id, in creation order. */
  branches: Map<string, BranchImage>;
}

/** The first seq a branch owns: 1 for `main`, `atSeq + 1` for a fork. */
export const firstOwnSeq = (branch: Branch): number => (branch.parent === undefined ? 1 : branch.parent.atSeq + 1);

/** The last seq of a branch's history (its parent's `atSeq` when it owns no message yet). */
export const lastSeq = (image: BranchImage): number => {
  const last = image.runs.at(-1);
  return last === undefined ? firstOwnSeq(image.branch) - 1 : last.firstSeq + last.count - 1;
};

/** How many messages a branch owns. */
export const ownCount = (image: BranchImage): number => lastSeq(image) - firstOwnSeq(image.branch) + 1;

/** The runs of a branch holding any seq in `fromSeq..throughSeq` (binary search; runs are sorted by seq). */
export function runsBetween(image: BranchImage, fromSeq: number, throughSeq: number): MessageRun[] {
  const runs = image.runs;
  let low = 0;
  let high = runs.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const run = runs[mid]!;
    if (run.firstSeq + run.count - 1 < fromSeq) low = mid + 1;
    else high = mid;
  }
  const out: MessageRun[] = [];
  for (let i = low; i < runs.length && runs[i]!.firstSeq <= throughSeq; i += 1) out.push(runs[i]!);
  return out;
}

/** Each checkpoints array's records by id, and how many of its records were counted (see {@link findCheckpoint}). */
const checkpointIds = new WeakMap<
  readonly CheckpointRecord[],
  { byId: Map<string, CheckpointRecord>; counted: number }
>();

/**
 * The checkpoint of a branch with this id, found in constant time: a session of thousands of turns
 * holds thousands of checkpoints, and every save checks its id. The index of each
 * {@link BranchImage.checkpoints} array is built on first use and extended by the records pushed
 * since; an array is only ever appended to or replaced (a delete filters it into a new array).
 */
export function findCheckpoint(branch: BranchImage, id: string): CheckpointRecord | undefined {
  const records = branch.checkpoints;
  let index = checkpointIds.get(records);
  if (index === undefined || index.counted > records.length) {
    index = { byId: new Map(), counted: 0 };
    checkpointIds.set(records, index);
  }
  for (; index.counted < records.length; index.counted += 1) {
    const record = records[index.counted]!;
    if (!index.byId.has(record.id)) index.byId.set(record.id, record);
  }
  return index.byId.get(id);
}

/**
 * The stored message at `seq` of a branch, when its run is read (see `logRanges.ts`).
 * @returns `undefined` when the branch does not own `seq`
 * @throws {Error} when the run is still on disk (a caller bug: read it first)
 */
export function messageAt(image: BranchImage, seq: number): Message | undefined {
  const [run] = runsBetween(image, seq, seq);
  if (run === undefined || seq < run.firstSeq) return undefined;
  if (run.messages === undefined) throw new Error(`FileStore bug: the run of seq ${seq} was used before it was read.`);
  return run.messages[seq - run.firstSeq];
}

const ManifestFields = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  sessionId: z.string(),
  branchId: z.string(),
  step: z.number().int().nonnegative(),
  throughSeq: z.number().int().nonnegative(),
  createdAt: z.string(),
});

/**
 * The stored document of a loaded record, parsed from {@link CheckpointRecord.documentJson} on first use.
 * @throws {Error} when the record is not loaded (a caller bug)
 */
export function recordDocument(record: CheckpointRecord): unknown {
  if (!record.loaded)
    throw new Error(`FileStore bug: checkpoint ${JSON.stringify(record.id)} was used before it was read.`);
  if (record.documentJson !== undefined) {
    record.document = (JSON.parse(record.documentJson) as { checkpoint?: unknown }).checkpoint;
    record.documentJson = undefined;
  }
  return record.document;
}

/** The manifest fields of a document when they have the types {@link ManifestFields} requires (checked by hand), else `undefined`. */
function manifestFieldsOf(document: unknown): z.infer<typeof ManifestFields> | undefined {
  if (typeof document !== 'object' || document === null) return undefined;
  const { id, parentId, sessionId, branchId, step, throughSeq, createdAt } = document as Record<string, unknown>;
  if (
    typeof id !== 'string' ||
    typeof sessionId !== 'string' ||
    typeof branchId !== 'string' ||
    typeof createdAt !== 'string'
  )
    return undefined;
  if (parentId !== null && typeof parentId !== 'string') return undefined;
  if (
    !Number.isSafeInteger(step) ||
    (step as number) < 0 ||
    !Number.isSafeInteger(throughSeq) ||
    (throughSeq as number) < 0
  )
    return undefined;
  // `+ 0` turns -0 into 0, as a JSON round trip does.
  return {
    id,
    parentId,
    sessionId,
    branchId,
    step: (step as number) + 0,
    throughSeq: (throughSeq as number) + 0,
    createdAt,
  };
}

/**
 * The record of a checkpoint this process has just appended to the log: its manifest read from
 * `document` (the checkpoint as written, already validated; only its primitive manifest fields are
 * kept), its document parsed from `opJson` (the operation's JSON as written) only when a call needs
 * it. It equals what {@link checkpointRecord} gives for the same operation read back from the file.
 */
export function writtenCheckpointRecord(
  sessionId: string,
  branchId: string,
  id: string,
  document: unknown,
  opJson: string,
  savedAt: string,
  at: OpLocation,
): CheckpointRecord {
  const fields = manifestFieldsOf(document);
  if (fields === undefined)
    return checkpointRecord(
      sessionId,
      branchId,
      id,
      (JSON.parse(opJson) as { checkpoint?: unknown }).checkpoint,
      savedAt,
      at,
    );
  const own = fields.id === id && fields.sessionId === sessionId && fields.branchId === branchId;
  // One object literal (no spread of a shared base: V8 copies a spread followed by more members slowly).
  return {
    id,
    loaded: true,
    document: undefined,
    documentJson: opJson,
    writes: [],
    documentAt: at,
    writesAt: [],
    manifest: own ? manifestOf(id, fields) : undefined,
    createdAt: own ? fields.createdAt : savedAt,
  };
}

/** The manifest entry of checkpoint `id` from its document's manifest fields. */
function manifestOf(id: string, fields: z.infer<typeof ManifestFields>): CheckpointManifestEntry {
  const { parentId, step, throughSeq, createdAt } = fields;
  return { id, parentId, step, throughSeq, createdAt };
}

/**
 * A checkpoint record from its stored document (read), reading only the manifest fields.
 * @param savedAt when its manifest fields cannot be read: the time retention by age counts from
 * @param at where the document is in the log, if it is in one
 */
export function checkpointRecord(
  sessionId: string,
  branchId: string,
  id: string,
  document: unknown,
  savedAt: string,
  at?: OpLocation,
): CheckpointRecord {
  const parsed = ManifestFields.safeParse(document);
  const fields =
    parsed.success && parsed.data.id === id && parsed.data.sessionId === sessionId && parsed.data.branchId === branchId
      ? parsed.data
      : undefined;
  return {
    id,
    loaded: true,
    document,
    writes: [],
    documentAt: at,
    writesAt: [],
    manifest: fields === undefined ? undefined : manifestOf(id, fields),
    createdAt: fields === undefined ? savedAt : fields.createdAt,
  };
}
