import { z } from 'zod';
import { IsoTimestampSchema } from '../timestamp.js';

/** Session- or branch-scoped key/value state (JSON). Changed only through immer; see {@link StateContainer}. */
export const StateSchema = z.record(z.string(), z.unknown());
/** Session- or branch-scoped key/value state. */
export type State = z.infer<typeof StateSchema>;

/**
 * One conversation (docs/architecture.md). `version` starts at 1 and grows by one with each update; updates
 * compare-and-set it. Timestamps are ISO-8601 UTC strings.
 */
export const SessionSchema = z.object({
  id: z.string(),
  tenantId: z.string().optional(),
  userId: z.string().optional(),
  status: z.enum(['active', 'closed']),
  createdAt: IsoTimestampSchema,
  lastActivityAt: IsoTimestampSchema,
  closedAt: IsoTimestampSchema.optional(),
  closedReason: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()),
  state: StateSchema,
  version: z.number().int().positive(),
});
/** `{ id, tenantId?, userId?, status, createdAt, lastActivityAt, closedAt?, closedReason?, metadata, state, version }`. */
export type Session = z.infer<typeof SessionSchema>;

/** Where a fork starts: the first `atSeq` messages of `branchId`, referred to, never copied. */
export const BranchParentSchema = z.object({ branchId: z.string(), atSeq: z.number().int().nonnegative() });
/** `{ branchId, atSeq }`. */
export type BranchParent = z.infer<typeof BranchParentSchema>;

/**
 * A path through a session's messages. `main` has no parent. A fork's own messages start at
 * `parent.atSeq + 1`. `state` is branch-scoped state; `version` guards its updates.
 */
export const BranchSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  parent: BranchParentSchema.optional(),
  createdAt: IsoTimestampSchema,
  state: StateSchema,
  version: z.number().int().positive(),
});
/** `{ id, sessionId, parent?, createdAt, state, version }`. */
export type Branch = z.infer<typeof BranchSchema>;

/** The id of the branch every session has. */
export const MAIN_BRANCH = 'main';
