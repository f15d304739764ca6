/** MongoStore's message operations (collection `messages`, `_id` = `<sessionId>/<branchId>/<seq>`). */
import {
  ConcurrencyError,
  InvalidInputError,
  type Message,
  type ReadMessagesOptions,
  type TenantScope,
} from '@baton/core';
import {
  assertMessages,
  assertSessionId,
  branchLineage,
  parseStoredMessage,
  planAppend,
  SCHEMA_VERSIONS,
  sameMessage,
} from '@baton/core/store-kit';
import type { Filter } from 'mongodb';
import { assertBranchId, assertWholeNumber, optionsObject } from '../collections/inputGuards.js';
import type { MessageDoc } from '../collections/mongoCollections.js';
import { branchLookup, type MongoContext, requireBranch } from '../collections/mongoContext.js';
import { duplicateKeyIndexes, misplacedDocument } from '../collections/mongoErrors.js';
import { requireTenant, type TenantKey, tenantField } from './sessionTenants.js';

/**
 * A message as the API returns it: checked as strictly as `appendMessages` checks it (the fast
 * pre-check first, so a read of 1,000 messages runs no zod), without `_id`, `sessionId`, `branchId`
 * and `tenantId`; a document of an older `schemaVersion` is migrated first.
 * @throws {DocumentCorruptError} when a field fails the rules or the seq disagrees with `_id`
 */
export function toMessage(doc: MessageDoc): Message {
  const { _id, sessionId, branchId, tenantId: _tenant, ...rest } = doc;
  const message = parseStoredMessage(rest, `message document ${JSON.stringify(_id)}`);
  if (_id !== messageKey(sessionId, branchId, message.seq))
    throw misplacedDocument(`message document ${JSON.stringify(_id)}`, 'seq', message.seq);
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
  if (!Array.isArray(messages))
    throw new InvalidInputError(`appendMessages takes an array of messages, not ${JSON.stringify(messages)}.`);
  assertMessages(messages);
  const tenant = await requireTenant(context, sessionId, scope);
  const branch = await requireBranch(context, sessionId, branchId, tenant);
  if (messages.length === 0) return { inserted: 0 };
  const place: Place = { sessionId, branchId, tenant };
  const firstOwnSeq = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
  const cachedLast = context.branches.lastSeq(sessionId, branchId);
  let fresh: Message[];
  try {
    fresh = await plan(
      context,
      place,
      messages,
      firstOwnSeq,
      cachedLast ?? (await readLastSeq(context, place, firstOwnSeq)),
    );
  } catch (error) {
    // The cached last seq may be stale (another process appended): decide again on fresh facts.
    if (cachedLast === undefined || !(error instanceof InvalidInputError || error instanceof ConcurrencyError))
      throw error;
    fresh = await plan(context, place, messages, firstOwnSeq, await readLastSeq(context, place, firstOwnSeq));
  }
  if (fresh.length === 0) return { inserted: 0 };
  const inserted = await insertFresh(context, place, fresh);
  context.branches.setLastSeq(sessionId, branchId, fresh.at(-1)!.seq);
  return { inserted };
}

/** The branch an append writes to, with its session's tenant key. */
interface Place {
  sessionId: string;
  branchId: string;
  tenant: TenantKey;
}

/** What of the batch is new ({@link planAppend}); reads the stored ids only for seqs at or below `lastSeq`. */
async function plan(
  context: MongoContext,
  place: Place,
  messages: readonly Message[],
  firstOwnSeq: number,
  lastSeq: number,
): Promise<Message[]> {
  const overlap = messages.filter((m) => m.seq >= firstOwnSeq && m.seq <= lastSeq).map((m) => m.seq);
  const stored =
    overlap.length === 0 ? new Map<number, Pick<Message, 'id'>>() : await storedIds(context, place, overlap);
  return planAppend(place.branchId, messages, { firstOwnSeq, lastSeq, storedAt: (seq) => stored.get(seq) });
}

/**
 * Inserts the new messages with one ordered `insertMany`: the server applies them in seq order and
 * stops at the first failure, so whatever a failure (or a server crash) leaves stored is a prefix of
 * the batch, never a batch with a hole. A duplicate key stops the insert at that seq: the same
 * message id means this is a retry (it is skipped and the rest of the batch is inserted); another id
 * means another writer won, and this call's own inserts are removed again before the
 * {@link ConcurrencyError}, so a lost race leaves no half-appended batch.
 */
async function insertFresh(context: MongoContext, place: Place, fresh: Message[]): Promise<number> {
  const { messages: collection } = context.collections;
  const { sessionId, branchId, tenant } = place;
  const tenantId = tenantField(tenant);
  const ours: Message[] = [];
  let rest = fresh;
  while (rest.length > 0) {
    const docs: MessageDoc[] = rest.map((m) => ({
      schemaVersion: SCHEMA_VERSIONS.message,
      ...m,
      _id: messageKey(sessionId, branchId, m.seq),
      sessionId,
      branchId,
      ...tenantId,
    }));
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
      const existing = (await storedIds(context, place, [conflicting.seq])).get(conflicting.seq);
      if (existing === undefined || !sameMessage(existing, conflicting)) {
        if (ours.length > 0) {
          await collection.deleteMany({
            sessionId,
            branchId,
            ...tenant,
            seq: { $in: ours.map((m) => m.seq) },
            id: { $in: ours.map((m) => m.id) },
          });
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
async function storedIds(
  context: MongoContext,
  place: Place,
  seqs: number[],
): Promise<Map<number, Pick<Message, 'id'>>> {
  const { sessionId, branchId, tenant } = place;
  const docs = await context.collections.messages
    .find({ sessionId, branchId, ...tenant, seq: { $in: seqs } }, { projection: { _id: 0, seq: 1, id: 1 } })
    .toArray();
  return new Map(docs.map((d) => [d.seq, { id: d.id }]));
}

/** The branch's last own seq from the database (one read), recorded in the cache. */
async function readLastSeq(context: MongoContext, place: Place, firstOwnSeq: number): Promise<number> {
  const { sessionId, branchId, tenant } = place;
  const last = await context.collections.messages.findOne(
    { sessionId, branchId, ...tenant },
    { sort: { seq: -1 }, projection: { _id: 0, seq: 1 } },
  );
  const seq = last?.seq ?? firstOwnSeq - 1;
  context.branches.setLastSeq(sessionId, branchId, seq);
  return seq;
}

/**
 * One read of the branch's lineage segments (plus one read of the branch list when it is not cached).
 * A read that reaches the branch's end records its last seq in the {@link BranchCache}, so the next
 * append (a worker that loads the history before each turn) needs no read of its own.
 */
export async function readMessages(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  optionsInput?: ReadMessagesOptions,
): Promise<Message[]> {
  assertSessionId(sessionId);
  assertBranchId(branchId);
  const input = optionsObject('readMessages options', optionsInput);
  const options: ReadMessagesOptions = {};
  if (input.fromSeq !== undefined) options.fromSeq = assertWholeNumber('fromSeq', input.fromSeq, 0);
  if (input.throughSeq !== undefined) options.throughSeq = assertWholeNumber('throughSeq', input.throughSeq, 0);
  const tenant = await requireTenant(context, sessionId, input);
  const lookup = await branchLookup(context, sessionId, branchId, tenant);
  const segments = branchLineage(branchId, lookup, sessionId, options);
  if (segments.length === 0) return [];
  const docs = await context.collections.messages
    .find(lineageFilter(sessionId, tenant, segments))
    .sort({ seq: 1 })
    .toArray();
  const messages = docs.map(toMessage);
  if (options.throughSeq === undefined) {
    const ownLast = docs.findLast((d) => d.branchId === branchId)?.seq;
    if (ownLast !== undefined) context.branches.setLastSeq(sessionId, branchId, ownLast);
    else if (options.fromSeq === undefined)
      context.branches.setLastSeq(sessionId, branchId, lookup(branchId)?.parent?.atSeq ?? 0);
  }
  return messages;
}

/**
 * How many messages a branch shows (through its parents), for a fork's bounds check. One count.
 */
export async function countMessages(
  context: MongoContext,
  sessionId: string,
  branchId: string,
  tenant: TenantKey,
): Promise<number> {
  const segments = branchLineage(branchId, await branchLookup(context, sessionId, branchId, tenant), sessionId);
  if (segments.length === 0) return 0;
  return context.collections.messages.countDocuments(lineageFilter(sessionId, tenant, segments));
}

function lineageFilter(
  sessionId: string,
  tenant: TenantKey,
  segments: ReturnType<typeof branchLineage>,
): Filter<MessageDoc> {
  const parts = segments.map(({ branch, fromSeq, throughSeq }) => ({
    branchId: branch.id,
    seq: Number.isFinite(throughSeq) ? { $gte: fromSeq, $lte: throughSeq } : { $gte: fromSeq },
  }));
  return parts.length === 1 ? { sessionId, ...tenant, ...parts[0] } : { sessionId, ...tenant, $or: parts };
}
