import { z } from 'zod';
import { IsoTimestampSchema } from '../timestamp.js';

/**
 * A standing approval ("always allow", OpenAI Agents' `alwaysApprove`): a human answered a
 * `tool_approval` request for `toolName` with "always", so later calls of that tool in the same
 * scope run without a request. `scope` is `'session'` (the grant lives with the session, shared by
 * its branches); `requestId` and `agent` name the request that granted it, `grantedAt` when. A tool
 * result that ran under a grant records it (`metadata.approvalGrant`), so the history tells who
 * allowed what even after the grant is revoked.
 */
export const ApprovalGrantSchema = z.object({
  toolName: z.string().min(1),
  scope: z.literal('session'),
  grantedAt: IsoTimestampSchema,
  requestId: z.string(),
  agent: z.string(),
});
/** `{ toolName, scope: 'session', grantedAt, requestId, agent }` (see {@link ApprovalGrantSchema}). */
export type ApprovalGrant = z.infer<typeof ApprovalGrantSchema>;

/**
 * How a runtime tells an executor which tools hold a standing approval: the grant for `toolName`,
 * or `undefined` when a call of it must still ask (or a promise of either, for a runtime that checks
 * its store first). Consulted only for a call whose tool needs approval and that has no decision of
 * its own (a rejection or approval of that very call wins).
 *
 * @example
 * ```ts
 * const grants: ApprovalGrantLookup = (toolName) => (toolName === 'refund' ? grant : undefined);
 * ```
 */
export type ApprovalGrantLookup = (toolName: string) => ApprovalGrant | undefined | Promise<ApprovalGrant | undefined>;
