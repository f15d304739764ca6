import { FileStore, InvalidInputError, type SessionLogRepair, type SessionLogReport, type Store } from '@baton/core';

/** Options of {@link checkStoreLog}. */
export interface StoreLogOptions {
  /** A FileStore (`openStore('file:DIR')`); other stores keep no session log. */
  store: Store;
  sessionId: string;
  /** Salvage a damaged log (`FileStore.repair`) instead of only checking it (`FileStore.verify`). */
  repair?: boolean;
}

/** What {@link checkStoreLog} found (and did), as text and as the store's report. */
export interface StoreLogResult {
  /** Lines for a terminal. */
  text: string;
  report: SessionLogReport | SessionLogRepair;
  /** Whether the session log is intact now (after a repair: whether one was needed and done). */
  ok: boolean;
}

/**
 * `baton store verify` / `baton store repair`: checks a FileStore session log record by record,
 * and on `repair`, keeps the intact records before the first damaged one and moves the damaged
 * file aside (see `FileStore.verify` and `FileStore.repair`).
 *
 * @returns the report as text; `ok` is false when `verify` found damage
 * @throws {InvalidInputError} when the store is not a FileStore; {@link NotFoundError} for an
 *   unknown session; `LogRecordCorruptError` when a repair has nothing to keep
 * @example
 * ```ts
 * const store = openStore('file:./data');
 * const { text, ok } = await checkStoreLog({ store, sessionId: 'chat-81' });
 * ```
 */
export async function checkStoreLog(options: StoreLogOptions): Promise<StoreLogResult> {
  const { store, sessionId } = options;
  if (!(store instanceof FileStore)) {
    throw new InvalidInputError(
      `baton store verify|repair reads FileStore session logs; --store names a ${store.kind} store. Pass --store file:DIR.`,
    );
  }
  const report = options.repair ? await store.repair(sessionId) : await store.verify(sessionId);
  const lines = [`session ${sessionId}: ${report.file} (format ${report.version}, ${report.bytes} bytes)`];
  const intact = Object.entries(report.intactThroughSeq)
    .map(([branch, seq]) => `${branch} through seq ${seq}`)
    .join(', ');
  if (report.damage === undefined) {
    lines.push(`ok: ${report.intactRecords} records intact (${intact || 'no messages'})`);
    if (report.tornBytes > 0)
      lines.push(
        `a torn last line of ${report.tornBytes} bytes (a write a crash cut off): ignored, and cut off by the next write`,
      );
  } else {
    const { record, offset, recordsAfter, message } = report.damage;
    lines.push(`damaged: record ${record} (line ${record}, byte ${offset}); ${recordsAfter} records after it`);
    lines.push(`intact: ${report.intactRecords} records before it (${intact || 'no messages'})`);
    lines.push(message);
  }
  const repair = report as Partial<SessionLogRepair>;
  if (repair.repaired)
    lines.push(
      `repaired: the log now holds the ${report.intactRecords} intact records; the damaged log was kept as ${repair.movedTo}`,
    );
  else if (options.repair && report.damage === undefined) lines.push('nothing to repair');
  else if (report.damage !== undefined)
    lines.push(`to keep the intact records: baton store repair --store file:${store.directory} --session ${sessionId}`);
  return { text: lines.join('\n'), report, ok: report.damage === undefined || repair.repaired === true };
}
