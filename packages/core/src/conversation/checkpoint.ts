import { z } from 'zod';
import { CheckpointCorruptError } from '../errors.js';
import { RequestSchema } from './request.js';
import { IsoTimestampSchema } from '../timestamp.js';

/**
 * A tool result finished in the current, unfinished step, saved before its sibling calls finish so
 * that recovery never runs a finished tool again (docs/architecture.md invariant 4).
 */
export const PendingWriteSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  agent: z.string(),
  content: z.string(),
  isError: z.boolean(),
  /** Wall time the tool took, in milliseconds. */
  durationMs: z.number().nonnegative(),
  createdAt: IsoTimestampSchema,
  /** Set when the tool moved control (a handoff or the end of the conversation), so a resumed step still does. */
  control: z
    .object({ kind: z.enum(['handoff', 'end_conversation']), target: z.string().optional(), reason: z.string().optional() })
    .optional(),
});
/** `{ toolCallId, toolName, agent, content, isError, durationMs, createdAt, control? }`. */
export type PendingWrite = z.infer<typeof PendingWriteSchema>;

/** One immer patch (immer's `Patch`): `{ op, path, value? }`. */
export const StatePatchSchema = z.object({
  op: z.enum(['add', 'remove', 'replace']),
  path: z.array(z.union([z.string(), z.number()])),
  value: z.unknown().optional(),
});
/** One immer patch. */
export type StatePatch = z.infer<typeof StatePatchSchema>;

/** The current checkpoint format. Older formats keep loading through {@link parseCheckpoint}. */
export const CHECKPOINT_SCHEMA_VERSION = 1;

/**
 * Where an unfinished turn stands (docs/architecture.md). `machine` is the routing machine's persisted
 * snapshot (JSON); `throughSeq` is the last message of the branch the checkpoint covers; messages
 * are never copied into it, so its size does not grow with the conversation.
 */
export const CheckpointSchema = z.object({
  schemaVersion: z.literal(CHECKPOINT_SCHEMA_VERSION),
  id: z.string(),
  parentId: z.string().nullable(),
  sessionId: z.string(),
  branchId: z.string(),
  step: z.number().int().nonnegative(),
  createdAt: IsoTimestampSchema,
  throughSeq: z.number().int().nonnegative(),
  machine: z.unknown(),
  pendingRequests: z.array(RequestSchema),
  pendingWrites: z.array(PendingWriteSchema),
  statePatches: z.object({ session: z.array(StatePatchSchema), branch: z.array(StatePatchSchema) }),
});
/** A checkpoint: `{ schemaVersion, id, parentId, sessionId, branchId, step, createdAt, throughSeq, machine, pendingRequests, pendingWrites, statePatches }`. */
export type Checkpoint = z.infer<typeof CheckpointSchema>;

/** A checkpoint's manifest entry, as `listCheckpoints` returns it. */
export type CheckpointManifestEntry = Pick<Checkpoint, 'id' | 'parentId' | 'step' | 'throughSeq' | 'createdAt'>;

/**
 * Validates a checkpoint read from storage.
 *
 * @param value parsed JSON, or the raw JSON text
 * @returns the checkpoint
 * @throws {CheckpointCorruptError} when the text is not JSON or fails the schema; the message names the first bad field
 * @example
 * ```ts
 * import { parseCheckpoint } from '@baton/core';
 * const checkpoint = parseCheckpoint(await readFile(path, 'utf8'));
 * ```
 */
export function parseCheckpoint(value: unknown): Checkpoint {
  let data = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch (cause) {
      throw new CheckpointCorruptError('The checkpoint is not valid JSON; it was not loaded.', { cause });
    }
  }
  const parsed = CheckpointSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CheckpointCorruptError(
      `The checkpoint fails its schema at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}; it was not loaded.`,
      { cause: parsed.error },
    );
  }
  return parsed.data;
}
