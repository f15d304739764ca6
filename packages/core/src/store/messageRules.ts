/**
 * What every store checks of an append: the messages themselves, and which of them a branch stores
 * (a retried append is a no-op; a taken seq or a gap is an error).
 */
import { type Message, MessageSchema } from '../conversation/message.js';
import { assertSafeMetadata } from '../conversation/metadata.js';
import { ConcurrencyError, InvalidInputError } from '../errors.js';
import { fastAcceptsMessage } from './messageFastCheck.js';

/**
 * Validates messages before an append: the schema (zod, unless {@link fastAcceptsMessage} already
 * knows it passes), safe metadata, and strictly ascending `seq`.
 * @throws {InvalidInputError} naming the first bad message
 */
export function assertMessages(messages: readonly Message[]): void {
  let previous = 0;
  for (const message of messages) {
    const parsed = fastAcceptsMessage(message) ? undefined : MessageSchema.safeParse(message);
    if (parsed !== undefined && !parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInputError(
        `Message seq ${String(message?.seq)} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
      );
    }
    if (message.metadata !== undefined) assertSafeMetadata(`message ${message.seq} metadata`, message.metadata);
    if (message.seq <= previous)
      throw new InvalidInputError(
        `Messages must be appended in ascending seq order; ${message.seq} follows ${previous}.`,
      );
    previous = message.seq;
  }
}

/** Whether two messages at one seq are the same message (a retried append), by id. */
export function sameMessage(a: Pick<Message, 'id'>, b: Pick<Message, 'id'>): boolean {
  return a.id === b.id;
}

/** Where a branch stands before an append (see {@link planAppend}). */
export interface BranchEnd {
  /** The first seq the branch owns: `parent.atSeq + 1` for a fork, 1 for `main`. */
  firstOwnSeq: number;
  /** The branch's last seq, `firstOwnSeq - 1` when it owns no message yet. */
  lastSeq: number;
  /** The branch's own stored message at `seq`, for every seq of the batch that is `<= lastSeq`. */
  storedAt: (seq: number) => Pick<Message, 'id'> | undefined;
}

/**
 * Decides what an append stores. Messages already stored (same seq, same id) are skipped, so a
 * retried append is a no-op; the rest must continue the branch without a gap.
 *
 * @param branchId for messages
 * @param messages validated by {@link assertMessages} (ascending seq)
 * @param end where the branch stands
 * @returns the messages to store, in order
 * @throws {ConcurrencyError} when a seq already holds another message (another writer appended first);
 *   {@link InvalidInputError} when a seq belongs to a fork's parent or leaves a gap
 */
export function planAppend(branchId: string, messages: readonly Message[], end: BranchEnd): Message[] {
  const fresh: Message[] = [];
  let next = end.lastSeq + 1;
  for (const message of messages) {
    if (message.seq < end.firstOwnSeq) {
      throw new InvalidInputError(
        `Seq ${message.seq} belongs to the parent of fork ${JSON.stringify(branchId)}; the fork's own messages start at seq ${end.firstOwnSeq}.`,
      );
    }
    if (message.seq <= end.lastSeq) {
      const stored = end.storedAt(message.seq);
      if (stored === undefined || !sameMessage(stored, message)) {
        throw new ConcurrencyError(
          `Seq ${message.seq} of branch ${JSON.stringify(branchId)} already holds another message (id ${JSON.stringify(stored?.id)}, not ${JSON.stringify(message.id)}): another writer appended first. Reload the branch and retry.`,
        );
      }
      continue;
    }
    if (message.seq !== next) {
      throw new InvalidInputError(
        `Seq ${message.seq} would leave a gap in branch ${JSON.stringify(branchId)}: the next seq is ${next}. Append messages with consecutive seqs.`,
      );
    }
    fresh.push(message);
    next += 1;
  }
  return fresh;
}
