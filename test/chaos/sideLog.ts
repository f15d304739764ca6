/**
 * The side log of a chaos trial: JSON lines that every child process of the trial appends to, each
 * line written and fsynced before the child goes on, so a SIGKILL loses none of it. The oracle reads
 * it next to the store.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';

/** One line of the side log. */
export type SideLogRecord =
  | { t: 'child'; pid: number; child: number; killAt: number }
  | { t: 'tool.start' | 'tool.end'; toolCallId: string; agent: string; tool: string }
  | { t: 'tool.result'; toolCallId: string; agent: string; tool: string }
  | {
      t: 'model';
      agent: string;
      hash: string;
      ids: string[];
      markers: string[];
      toolCallIds: string[];
      resultIds: string[];
    }
  | { t: 'ack'; messages: Array<{ id: string; seq: number }>; requests: Array<{ id: string; toolCallId: string }> }
  | { t: 'answer'; requestId: string; toolCallId: string }
  | { t: 'retry'; code: string; message: string }
  | { t: 'done'; points: number };

/**
 * Appends records to a side log file (append + fsync per record).
 *
 * @example
 * ```ts
 * const log = new SideLog('/tmp/trial-1/side.jsonl');
 * log.append({ t: 'retry', code: 'CONCURRENCY', message: 'stale version' });
 * ```
 */
export class SideLog {
  readonly #fd: number;

  constructor(path: string) {
    this.#fd = openSync(path, 'a');
  }

  /** Writes one record and fsyncs it. */
  append(record: SideLogRecord): void {
    writeSync(this.#fd, `${JSON.stringify(record)}\n`);
    fsyncSync(this.#fd);
  }

  /** Closes the file. */
  close(): void {
    closeSync(this.#fd);
  }
}

/** Every record of a side log, in order; a torn last line (a write cut by SIGKILL) is left out. */
export function readSideLog(path: string): SideLogRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const records: SideLogRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as SideLogRecord);
    } catch {
      // a line cut by the kill
    }
  }
  return records;
}
