import { InvalidInputError, type Message } from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/** Which of a branch's messages `session.readMessages` returns: inclusive seq bounds, or the newest `last`. */
export interface HistoryRange {
  /** The first seq (≥ 1), inclusive. */
  fromSeq?: number;
  /** The last seq (≥ 1), inclusive; default the branch's head. */
  throughSeq?: number;
  /** Only the newest `last` messages of the range (≥ 1), as OpenAI Agents' `session.getItems(limit)`. */
  last?: number;
}

/** Options of `session.history()`. */
export interface HistoryPagesOptions {
  /** Messages read from the store per call (default 500, ≥ 1). */
  pageSize?: number;
}

/** The default page of `session.history()`, in messages. */
export const DEFAULT_HISTORY_PAGE = 500;

function positiveInteger(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidInputError(
      `${name} must be an integer ≥ 1 (a message seq or count), not ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * The branch's stored messages in `range`, read from the store (fork parents included), oldest first.
 * `last` counts back from `throughSeq`, or from the newest message this session object knows.
 * @throws {InvalidInputError} for a bound or count that is not an integer ≥ 1
 */
export async function readRange(runtime: SessionRuntime, range: HistoryRange = {}): Promise<Message[]> {
  const fromSeq = positiveInteger('fromSeq', range.fromSeq);
  const throughSeq = positiveInteger('throughSeq', range.throughSeq);
  const last = positiveInteger('last', range.last);
  const end = throughSeq ?? runtime.history.headSeq;
  const from = last === undefined ? fromSeq : Math.max(fromSeq ?? 1, end - last + 1);
  const options = { ...runtime.scope };
  if (from !== undefined) Object.assign(options, { fromSeq: from });
  if (throughSeq !== undefined) Object.assign(options, { throughSeq });
  return runtime.config.store.readMessages(runtime.sessionId, runtime.branchId, options);
}

/**
 * Every stored message of the branch, oldest first, read lazily a page at a time (one store read
 * per page, the next only when the caller iterates on).
 * @throws {InvalidInputError} for a `pageSize` that is not an integer ≥ 1 (when iteration starts)
 */
export async function* historyPages(
  runtime: SessionRuntime,
  options: HistoryPagesOptions = {},
): AsyncGenerator<Message> {
  const pageSize = positiveInteger('pageSize', options.pageSize) ?? DEFAULT_HISTORY_PAGE;
  for (let fromSeq = 1; ; fromSeq += pageSize) {
    const page = await runtime.config.store.readMessages(runtime.sessionId, runtime.branchId, {
      ...runtime.scope,
      fromSeq,
      throughSeq: fromSeq + pageSize - 1,
    });
    yield* page;
    if (page.length < pageSize) return;
  }
}
