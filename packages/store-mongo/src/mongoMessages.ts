/** MongoStore's message operations (collection `messages`, `_id` = `<sessionId>/<branchId>/<seq>`). */
import {
  assertMessages,
  assertSessionId,
  branchLineage,
  ConcurrencyError,
  InvalidInputError,
  type Message,
  parseStoredMessage,
  planAppend,
  type ReadMessagesOptions,
  sameMessage,
  type TenantScope,
} from '@baton/core';
import type { Filter } from 'mongodb';
import { assertBranchId, assertWholeNumber, optionsObject } from './inputGuards.js';
import type { MessageDoc } from './mongoCollections.js';
import { branchLookup, type MongoContext, requireBranch } from './mongoContext.js';
import { duplicateKeyIndexes, misplacedDocument } from './mongoErrors.js';
import { requireTenant } from './sessionTenants.js';

/**
 * A message as the API returns it: checked as strictly as `appendMessages` checks it (the fast
 * pre-check first, so a read of 1,000 messages runs no zod), without `_id`, `sessionId` and `branchId`.
 * @throws {DocumentCorruptError} when a field fails the rules or the seq disagrees with `_id`
 */
export function toMessage(doc: MessageDoc): Message {
  const { _id, sessionId, branchId, ...rest } = doc;
  const message = parseStoredMessage(rest, `message document ${JSON.stringify(_id)}`);
  if (_id !== messageKey(sessionId, branchId, message.seq)) throw misplacedDocument(`message document ${JSON.stringify(_id)}`, 'seq', message.seq);
  return message;
}

/** The `_id` of a message document. */
export function messageKey(sessionId: string, branchId: string, seq: number): string {
  return `${sessionId}/${branchId}/${seq}`;
}

/**
 * Appends with one ordered `insertMany` on the fast path: the branch and its last seq come from
 * the {@link BranchCache} and the session's tenant from `SessionTenants`, so a turn's append needs no read. Seqs at or below the last seq (a retry)
 * are checked against what is stored (one read); a batch that looks like a gap is re-checked
 * against the database before it is refused (another process may have appended). Duplicate keys
 * (a writer racing for the same seqs) are handled by {@link insertFresh}.
 */
export async function appendMessages(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  messages: readonly Message[],
  scope?: TenantScope,
): Promise<{ inserted: number }> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  if (!Array.isArray(messages)) throw new InvalidInputError(`appendMessages takes an array of messages, not ${JSON.stringify(messages)}.`);
  assertMessages(messages);
  await requireTenant(context, sessionId, scope);
  const branch = await requireBranch(context, sessionId, branchId);
  if (messages.length === 0) return { inserted: 0 };
  const firstOwnSeq = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
  const cachedLast = context.branches.lastSeq(sessionId, branchId);
  let fresh: Message[];
  try {
    fresh = await plan(context, sessionId, branchId, messages, firstOwnSeq, cachedLast ?? (await readLastSeq(context, sessionId, branchId, firstOwnSeq)));
  } catch (error) {
    // The cached last seq may be stale (another process appended): decide again on fresh facts.
    if (cachedLast === undefined || !(error instanceof InvalidInputError || error instanceof ConcurrencyError)) throw error;
    fresh = await plan(context, sessionId, branchId, messages, firstOwnSeq, await readLastSeq(context, sessionId, branchId, firstOwnSeq));
  }
  if (fresh.length === 0) return { inserted: 0 };
  const inserted = await insertFresh(context, sessionId, branchId, fresh);
  context.branches.setLastSeq(sessionId, branchId, fresh.at(-1)!.seq);
  return { inserted };
}

/** What of the batch is new ({@link planAppend}); reads the stored ids only for seqs at or below `lastSeq`. */
async function plan(context: MongoContext, sessionId: string, branchId: string, messages: readonly Message[], firstOwnSeq: number, lastSeq: number): Promise<Message[]> {
  const overlap = messages.filter((m) => m.seq >= firstOwnSeq && m.seq <= lastSeq).map((m) => m.seq);
  const stored = overlap.length === 0 ? new Map<number, Pick<Message, 'id'>>() : await storedIds(context, sessionId, branchId, overlap);
  return planAppend(branchId, messages, { firstOwnSeq, lastSeq, storedAt: (seq) => stored.get(seq) });
}

/**
 * Inserts the new messages with one ordered `insertMany`: the server applies them in seq order and
 * stops at the first failure, so whatever a failure (or a server crash) leaves stored is a prefix of
 * the batch, never a batch with a hole. A duplicate key stops the insert at that seq: the same
 * message id means this is a retry (it is skipped and the rest of the batch is inserted); another id
 * means another writer won, and this call's own inserts are removed again before the
 * {@link ConcurrencyError}, so a lost race leaves no half-appended batch.
 */
async function insertFresh(context: MongoContext, sessionId: string, branchId: string, fresh: Message[]): Promise<number> {
  const { messages: collection } = context.collections;
  const ours: Message[] = [];
  let rest = fresh;
  while (rest.length > 0) {
    const docs: MessageDoc[] = rest.map((m) => ({ ...m, _id: messageKey(sessionId, branchId, m.seq), sessionId, branchId }));
    try {
      await collection.insertMany(docs, { ordered: true });
      ours.push(...rest);
      return ours.length;
    } catch (error) {
      const duplicates = duplicateKeyIndexes(error);
      const at = duplicates?.[0];
      if (at === undefined) throw error;
      ours.push(...rest.slice(0, at));
      const conflicting = rest[at]!;
      const existing = (await storedIds(context, sessionId, branchId, [conflicting.seq])).get(conflicting.seq);
      if (existing === undefined || !sameMessage(existing, conflicting)) {
        if (ours.length > 0) {
          await collection.deleteMany({ sessionId, branchId, seq: { $in: ours.map((m) => m.seq) }, id: { $in: ours.map((m) => m.id) } });
        }
        context.branches.dropLastSeq(sessionId, branchId);
        throw new ConcurrencyError(
          `Seq ${conflicting.seq} of branch ${JSON.stringify(branchId)} already holds another message (id ${JSON.stringify(existing?.id)}, not ${JSON.stringify(conflicting.id)}): another writer appended first. Reload the branch and retry.`,
        );
      }
      rest = rest.slice(at + 1);
    }
  }
  return ours.length;
}

/** The stored message ids at these seqs of the branch (one read). */
async function storedIds(context: MongoContext, sessionId: string, branchId: string, seqs: number[]): Promise<Map<number, Pick<Message, 'id'>>> {
  const docs = await context.collections.messages.find({ sessionId, branchId, seq: { $in: seqs } }, { projection: { _id: 0, seq: 1, id: 1 } }).toArray();
  return new Map(docs.map((d) => [d.seq, { id: d.id }]));
}

/** The branch's last own seq from the database (one read), recorded in the cache. */
async function readLastSeq(context: MongoContext, sessionId: string, branchId: string, firstOwnSeq: number): Promise<number> {
  const last = await context.collections.messages.findOne({ sessionId, branchId }, { sort: { seq: -1 }, projection: { _id: 0, seq: 1 } });
  const seq = last?.seq ?? firstOwnSeq - 1;
  context.branches.setLastSeq(sessionId, branchId, seq);
  return seq;
}

/** One read of the branch's lineage segments (plus one read of the branch list when it is not cached). */
export async function readMessages(context: MongoContext, sessionId: string, branchId: string, optionsInput?: ReadMessagesOptions): Promise<Message[]> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const input = optionsObject('readMessages options', optionsInput);
  const options: ReadMessagesOptions = {};
  if (input.fromSeq !== undefined) options.fromSeq = assertWholeNumber('fromSeq', input.fromSeq, 0);
  if (input.throughSeq !== undefined) options.throughSeq = assertWholeNumber('throughSeq', input.throughSeq, 0);
  await requireTenant(context, sessionId, input);
  const segments = branchLineage(branchId, await branchLookup(context, sessionId, branchId), sessionId, options);
  if (segments.length === 0) return [];
  const docs = await context.collections.messages.find(lineageFilter(sessionId, segments)).sort({ seq: 1 }).toArray();
  return docs.map(toMessage);
}

/**
 * How many messages a branch shows (through its parents), for a fork's bounds check. One count.
 */
export async function countMessages(context: MongoContext, sessionId: string, branchId: string): Promise<number> {
  const segments = branchLineage(branchId, await branchLookup(context, sessionId, branchId), sessionId);
  if (segments.length === 0) return 0;
  return context.collections.messages.countDocuments(lineageFilter(sessionId, segments));
}

function lineageFilter(sessionId: string, segments: ReturnType<typeof branchLineage>): Filter<MessageDoc> {
  const parts = segments.map(({ branch, fromSeq, throughSeq }) => ({
    branchId: branch.id,
    seq: Number.isFinite(throughSeq) ? { $gte: fromSeq, $lte: throughSeq } : { $gte: fromSeq },
  }));
  return parts.length === 1 ? { sessionId, ...parts[0] } : { sessionId, $or: parts };
}
