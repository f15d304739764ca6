import { InvalidInputError } from '@baton/core';

/**
 * Where an event stands in its branch: `seq`, the last committed message it follows (a `message`
 * event has its own message's seq and `index` 0), and `index`, its place among the events after
 * that message. Positions order the events of a branch: `(seq, index)` compared as a pair.
 */
export interface EventPosition {
  /**
   * The branch lease's epoch of the turn run that sent it (absent or 0 without a lease store, and
   * for stored messages replayed from the store): a cut turn re-run gets a new epoch, so its events
   * come after every event of the cut run even where it re-uses their seqs.
   */
  epoch?: number;
  seq: number;
  index: number;
}

/**
 * The SSE `id` of an event: `<sessionId>/<branchId>/<epoch>:<seq>.<index>`, or without an epoch
 * `<sessionId>/<branchId>/<seq>.<index>` (session and branch ids cannot hold `/`, see core's
 * `isValidId`). `<seq>.<index>` is a pair, not a decimal: `7.10` comes after `7.9`.
 *
 * @example
 * ```ts
 * formatEventId('chat-81', 'main', { seq: 7, index: 2 }); // 'chat-81/main/7.2'
 * formatEventId('chat-81', 'main', { epoch: 3, seq: 7, index: 2 }); // 'chat-81/main/3:7.2'
 * ```
 */
export function formatEventId(sessionId: string, branchId: string, position: EventPosition): string {
  const epoch = position.epoch === undefined || position.epoch === 0 ? '' : `${position.epoch}:`;
  return `${sessionId}/${branchId}/${epoch}${position.seq}.${position.index}`;
}

/**
 * Reads a `Last-Event-ID` back into its session, branch and position.
 *
 * @throws {InvalidInputError} when `id` is not `<sessionId>/<branchId>/<seq>.<index>`
 * @example
 * ```ts
 * parseEventId('chat-81/main/7.2'); // { sessionId: 'chat-81', branchId: 'main', position: { seq: 7, index: 2 } }
 * ```
 */
export function parseEventId(id: string): { sessionId: string; branchId: string; position: EventPosition } {
  const match = /^([^/]+)\/([^/]+)\/(?:(\d{1,15}):)?(\d{1,15})\.(\d{1,15})$/.exec(id);
  if (match === null) {
    throw new InvalidInputError(
      `Last-Event-ID ${JSON.stringify(id)} is not an event id of this server (<sessionId>/<branchId>/<seq>.<index>, e.g. "chat-81/main/7.2").`,
    );
  }
  const position = { seq: Number(match[4]), index: Number(match[5]) };
  return {
    sessionId: match[1]!,
    branchId: match[2]!,
    position: match[3] === undefined ? position : { epoch: Number(match[3]), ...position },
  };
}

/** Orders two positions: negative when `a` comes first, 0 when equal, positive when `a` comes after. */
export function comparePositions(a: EventPosition, b: EventPosition): number {
  const epochs = (a.epoch ?? 0) - (b.epoch ?? 0);
  if (epochs !== 0) return epochs;
  return a.seq === b.seq ? a.index - b.index : a.seq - b.seq;
}
