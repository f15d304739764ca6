/**
 * How the conformance suite damages a stored checkpoint, for stores that keep documents a disk
 * fault or a hand edit can break (FileStore, MongoStore; InMemoryStore keeps validated objects).
 * Each store's run supplies a {@link DamageCheckpoint} that rewrites the stored document in place.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sealLogRecord } from '../support/sealLogRecord.js';

/**
 * The kinds of damage: a cut-off write, bytes that are not JSON, JSON of the wrong shape, a future
 * format, and values a save refuses: a pending write's `createdAt` that is no timestamp, a pending
 * request whose id breaks the id rule, a `human_step` request's `createdAt` that is no timestamp.
 */
export const CHECKPOINT_DAMAGE = [
  'truncated',
  'garbage',
  'wrongShape',
  'futureSchema',
  'writeTime',
  'requestId',
  'humanStepTime',
] as const;
/** One of {@link CHECKPOINT_DAMAGE}. */
export type CheckpointDamage = (typeof CHECKPOINT_DAMAGE)[number];

/** Rewrites the stored checkpoint `checkpointId` of a branch with `damage`. */
export type DamageCheckpoint = (
  sessionId: string,
  branchId: string,
  checkpointId: string,
  damage: CheckpointDamage,
) => Promise<void>;

/**
 * The damaged text of a stored checkpoint document (its JSON text as stored).
 * - `truncated`: the first half of the text (a torn write)
 * - `garbage`: bytes that are not JSON
 * - `wrongShape`: valid JSON, every field present, but `pendingRequests` is a string and `step` negative
 * - `futureSchema`: a valid document of `schemaVersion: 999`
 */
export function damagedText(stored: string, damage: CheckpointDamage): string {
  switch (damage) {
    case 'truncated':
      return stored.slice(0, Math.floor(stored.length / 2));
    case 'garbage':
      return '\u0000\u0007 not json {{{';
    case 'wrongShape':
      return JSON.stringify({ ...JSON.parse(stored), pendingRequests: 'none', step: -1 });
    case 'futureSchema':
      return JSON.stringify({ ...JSON.parse(stored), schemaVersion: 999 });
    case 'writeTime':
      return JSON.stringify({ ...JSON.parse(stored), pendingWrites: [{ ...PENDING_WRITE, createdAt: 'x' }] });
    case 'requestId':
      return JSON.stringify({ ...JSON.parse(stored), pendingRequests: [{ ...USER_INPUT, id: 'bad id\u00ff' }] });
    case 'humanStepTime':
      return JSON.stringify({ ...JSON.parse(stored), pendingRequests: [{ ...HUMAN_STEP, createdAt: 'x' }] });
  }
}

/** The field each kind of damage breaks, which the refusal names (`undefined`: the whole document). */
export const DAMAGED_FIELD: Readonly<Record<CheckpointDamage, string | undefined>> = {
  truncated: undefined,
  garbage: undefined,
  wrongShape: undefined,
  futureSchema: undefined,
  writeTime: 'pendingWrites.0.createdAt',
  requestId: 'pendingRequests.0.id',
  humanStepTime: 'pendingRequests.0.createdAt',
};

const AT = '2025-01-01T00:00:00.000Z';
const PENDING_WRITE = {
  toolCallId: 'call-1',
  toolName: 'refund',
  agent: 'billing',
  content: 'Refunded.',
  isError: false,
  durationMs: 3,
  createdAt: AT,
};
const CONVERSATION_REF = { branchId: 'main', throughSeq: 2 };
const USER_INPUT = {
  type: 'user_input',
  id: 'req-1',
  agent: 'billing',
  toolCallId: 'call-1',
  prompt: 'Order number?',
  conversationRef: CONVERSATION_REF,
  createdAt: AT,
};
const HUMAN_STEP = {
  type: 'human_step',
  id: 'req-2',
  agent: 'operator',
  stepId: 'step-1',
  prompt: 'Answer the customer',
  conversationRef: CONVERSATION_REF,
  createdAt: AT,
};

/** A valid pending write, `user_input` and `human_step` request (what the damage above breaks one field of). */
export const VALID_PENDING = { write: PENDING_WRITE, userInput: USER_INPUT, humanStep: HUMAN_STEP } as const;

/**
 * A {@link DamageCheckpoint} for a `FileStore` rooted at `directory`: in the session log, the
 * checkpoint's document is replaced by its damaged text (a JSON string when the damage leaves no
 * JSON), the log line itself stays whole. The log is rewritten by rename, as the store replaces it.
 */
export function damageFileCheckpoint(directory: string): DamageCheckpoint {
  return async (sessionId, branchId, checkpointId, damage) => {
    const file = join(directory, 'sessions', sessionId, 'log.jsonl');
    const [header, ...lines] = (await readFile(file, 'utf8')).trimEnd().split('\n');
    let found = false;
    const damaged = lines.map((line) => {
      const record = JSON.parse(line) as {
        ops: { op: string; branchId?: string; id?: string; checkpoint?: unknown }[];
      };
      for (const op of record.ops) {
        if (op.op !== 'checkpoint' || op.branchId !== branchId || op.id !== checkpointId) continue;
        found = true;
        const text = damagedText(JSON.stringify(op.checkpoint), damage);
        op.checkpoint = damage === 'truncated' || damage === 'garbage' ? text : JSON.parse(text);
      }
      // Sealed again: a damaged document inside a whole record (a damaged record is another test's).
      return sealLogRecord(JSON.stringify({ ops: record.ops }));
    });
    if (!found) throw new Error(`No checkpoint ${checkpointId} of branch ${branchId} in ${file}.`);
    await writeFile(`${file}.damaged`, `${[header, ...damaged].join('\n')}\n`);
    await rename(`${file}.damaged`, file);
  };
}
