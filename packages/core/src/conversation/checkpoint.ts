import { z } from 'zod';
import { CheckpointCorruptError } from '../errors.js';
import { IsoTimestampSchema } from '../timestamp.js';
import { ApprovalGrantSchema } from './approvalGrant.js';
import { RequestSchema } from './request.js';
import { migrateDocument, SCHEMA_VERSIONS, type StoredDocument } from './schemaVersions.js';

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
    .object({
      kind: z.enum(['handoff', 'end_conversation']),
      target: z.string().optional(),
      reason: z.string().optional(),
    })
    .optional(),
  /** The arguments a human approved the call with, when they edited the model's (stored as the tool message's `metadata.approvedArguments`). */
  approvedArguments: z.record(z.string(), z.unknown()).optional(),
  /**
   * The standing approval the call ran under, when no human was asked (stored as the tool message's
   * `metadata.approvalGrant`).
   */
  approvalGrant: ApprovalGrantSchema.optional(),
});
/**
 * `{ toolCallId, toolName, agent, content, isError, durationMs, createdAt, control?, approvedArguments?,
 * approvalGrant? }`.
 */
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
export const CHECKPOINT_SCHEMA_VERSION = SCHEMA_VERSIONS.checkpoint;

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
  /**
   * The W3C Trace Context `traceparent` of the turn that saved the checkpoint, when it was traced
   * (an OpenTelemetry SDK was registered): a turn resumed from it links its span to that turn's.
   */
  traceparent: z
    .string()
    .regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/)
    .optional(),
});
/** A checkpoint: `{ schemaVersion, id, parentId, sessionId, branchId, step, createdAt, throughSeq, machine, pendingRequests, pendingWrites, statePatches, traceparent? }`. */
export type Checkpoint = z.infer<typeof CheckpointSchema>;

/** A checkpoint's manifest entry, as `listCheckpoints` returns it. */
export type CheckpointManifestEntry = Pick<Checkpoint, 'id' | 'parentId' | 'step' | 'throughSeq' | 'createdAt'>;

/**
 * Validates a checkpoint read from storage, after migrating an older `schemaVersion` to
 * {@link CHECKPOINT_SCHEMA_VERSION} (a checkpoint without the field is version 1).
 *
 * @param value parsed JSON, or the raw JSON text
 * @param document names it in a version error (`'checkpoint document "s/main/cp-1"'`)
 * @returns the checkpoint
 * @throws {CheckpointCorruptError} when the text is not JSON or fails the schema; the message names the first bad field;
 *   {@link UnsupportedSchemaVersionError} when it was written by a newer Baton
 * @example
 * ```ts
 * import { parseCheckpoint } from '@baton/core';
 * const checkpoint = parseCheckpoint(await readFile(path, 'utf8'));
 * ```
 */
export function parseCheckpoint(value: unknown, document = 'checkpoint'): Checkpoint {
  let data = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch (cause) {
      throw new CheckpointCorruptError('The checkpoint is not valid JSON; it was not loaded.', { cause });
    }
  }
  if (data !== null && typeof data === 'object' && !Array.isArray(data))
    data = migrateDocument('checkpoint', data as StoredDocument, document) ?? data;
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
