/**
 * Damage to a record of a session log (format 3: each record sealed with its CRC-32C) is found
 * exactly and named: a byte flipped at every record boundary of a 50-message log (a record's first
 * byte, its newline) and in the middle of every record. Each time: `verify` names the damaged
 * record, its byte offset and what the records before it hold; every call either answers exactly
 * what was stored or throws `LogRecordCorruptError` naming that record (never a wrong message);
 * `repair` keeps the records before it, moves the damaged bytes aside untouched, and the session
 * reads and writes again from there. A torn last line (a crash) stays silent.
 */
import { cp, readFile, truncate, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type Checkpoint, FileStore, LogRecordCorruptError, type Message } from '../src/index.js';
import { logFileOf } from './support/sessionLogFile.js';
import { makeCheckpoint, makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filerecord');
const ID = 'flip';

/** A 50-message session written as the runtime writes it: per turn one writeBatch (two messages and a checkpoint; nothing superseded, so no compaction). */
async function fiftyMessageLog(
  indexEveryBytes: number,
): Promise<{ directory: string; messages: Message[]; checkpoints: Checkpoint[] }> {
  const directory = await tempDir();
  const store = new FileStore({ directory, indexEveryBytes });
  await store.createSession({ id: ID, userId: 'u-1' });
  const checkpoints: Checkpoint[] = [];
  for (let turn = 0; turn < 25; turn += 1) {
    const seq = 2 * turn + 1;
    const checkpoint = makeCheckpoint(ID, {
      step: turn + 1,
      throughSeq: seq + 1,
      parentId: checkpoints.at(-1)?.id ?? null,
    });
    await store.writeBatch({
      sessionId: ID,
      branchId: 'main',
      messages: [
        makeMessage(seq, { content: `question ${seq}` }),
        makeMessage(seq + 1, { agent: 'billing', content: `answer ${seq + 1}` }),
      ],
      checkpoint,
    });
    checkpoints.push(checkpoint);
  }
  const messages = await store.readMessages(ID, 'main');
  expect(messages).toHaveLength(50);
  return { directory, messages, checkpoints };
}

/** Per line of the log (1 = header): its start offset, its end (newline), how many `main` messages and which checkpoint it holds. */
function recordsOf(bytes: Buffer): { start: number; end: number; messages: number; checkpoint?: string }[] {
  const out: { start: number; end: number; messages: number; checkpoint?: string }[] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0x0a, start);
    const json = JSON.parse(bytes.toString('utf8', start, end)) as {
      ops?: { op: string; messages?: unknown[]; id?: string }[];
    };
    const ops = json.ops ?? [];
    const checkpoint = ops.find((op) => op.op === 'checkpoint')?.id;
    out.push({
      start,
      end,
      messages: ops.reduce((n, op) => n + (op.messages?.length ?? 0), 0),
      ...(checkpoint === undefined ? {} : { checkpoint }),
    });
    start = end + 1;
  }
  return out;
}

/** Each call either answers what was stored or throws LogRecordCorruptError naming `record`. */
async function expectRightOrNamed<T>(call: Promise<T>, right: T, record: number): Promise<void> {
  try {
    expect(await call).toEqual(right);
  } catch (error) {
    if (!(error instanceof LogRecordCorruptError)) throw error;
    expect(error.record).toBe(record);
  }
}

describe('FileStore: a damaged record of a session log', () => {
  for (const indexEveryBytes of [1024 * 1024, 1]) {
    it(`names the record, keeps what precedes it, and never returns a wrong message (${indexEveryBytes === 1 ? 'indexed after every write' : 'no index'})`, async () => {
      const { directory: original, messages, checkpoints } = await fiftyMessageLog(indexEveryBytes);
      const bytes = await readFile(logFileOf(original, ID));
      const records = recordsOf(bytes);
      expect(records.length).toBe(28); // header, session, branch, 25 turns
      // Every record boundary (a record's first byte and its newline) and the middle of every record.
      const positions = records.flatMap(({ start, end }) => [start, Math.floor((start + end) / 2), end]);
      for (const position of positions) {
        for (const mask of [0xff, 0x01]) {
          const record = records.findIndex((r) => position <= r.end) + 1;
          const { start, end } = records[record - 1]!;
          // A damaged newline merges the record with the next: one line fewer follows it.
          const recordsAfter = records.length - record - (position === end && record < records.length ? 1 : 0);
          const before = records.slice(0, record - 1);
          const intactSeq = before.reduce((n, r) => n + r.messages, 0);
          const newest = checkpoints.find(
            (c) => c.id === before.findLast((r) => r.checkpoint !== undefined)?.checkpoint,
          );
          const directory = await tempDir();
          await cp(original, directory, { recursive: true });
          const damaged = Buffer.from(bytes);
          damaged[position]! ^= mask;
          await writeFile(logFileOf(directory, ID), damaged);
          const label = `byte ${position} ^ ${mask} (record ${record})`;

          const store = new FileStore({ directory });
          const report = await store.verify(ID);
          expect(report, label).toMatchObject({
            ok: false,
            intactRecords: record - 1,
            intactBytes: start,
            damage: { record, offset: start, recordsAfter },
          });
          expect(report.intactThroughSeq, label).toEqual(record > 3 ? { main: intactSeq } : {});
          expect(report.damage?.message, label).toMatch(
            new RegExp(`line ${record} of .*log\\.jsonl( \\(its header\\))? is damaged`),
          );

          const reader = new FileStore({ directory });
          await expectRightOrNamed(reader.readMessages(ID, 'main'), messages, record);
          await expectRightOrNamed(reader.readMessages(ID, 'main', { fromSeq: 45 }), messages.slice(44), record);
          await expectRightOrNamed(
            reader.loadCheckpoint(ID, 'main').then((c) => c?.id),
            checkpoints.at(-1)!.id,
            record,
          );

          if (record <= 3) {
            // Nothing to keep before the session and its main branch are stored.
            await expect(store.repair(ID), label).rejects.toBeInstanceOf(LogRecordCorruptError);
            expect(await readFile(logFileOf(directory, ID))).toEqual(damaged);
            continue;
          }
          const repair = await store.repair(ID);
          expect(repair, label).toMatchObject({ repaired: true, intactThroughSeq: { main: intactSeq } });
          expect(await readFile(repair.movedTo!), label).toEqual(damaged); // the original bytes, kept
          const salvaged = new FileStore({ directory });
          expect(await salvaged.verify(ID), label).toMatchObject({ ok: true, intactThroughSeq: { main: intactSeq } });
          expect(await salvaged.readMessages(ID, 'main'), label).toEqual(messages.slice(0, intactSeq));
          expect((await salvaged.loadCheckpoint(ID, 'main'))?.id, label).toBe(newest?.id);
          expect(await salvaged.appendMessages(ID, 'main', [makeMessage(intactSeq + 1)]), label).toEqual({
            inserted: 1,
          });
        }
      }
    }, 600_000); // every damaged byte copies, verifies and repairs a folder (fsync'd): over 120 s at load average 15
  }

  it('recovers a torn last line silently, and repair leaves an intact log alone', async () => {
    const { directory, messages } = await fiftyMessageLog(1024 * 1024);
    const file = logFileOf(directory, ID);
    const records = recordsOf(await readFile(file));
    const last = records.at(-1)!;
    await truncate(file, last.end - 5); // a crash cut the last write short
    const store = new FileStore({ directory });
    expect(await store.readMessages(ID, 'main')).toEqual(messages.slice(0, 48));
    expect(await store.verify(ID)).toMatchObject({
      ok: true,
      tornBytes: last.end - 5 - last.start,
      intactRecords: records.length - 1,
    });
    expect(await store.repair(ID)).toMatchObject({ ok: true, repaired: false });
    expect(await store.appendMessages(ID, 'main', [makeMessage(49)])).toEqual({ inserted: 1 });
    expect(await new FileStore({ directory }).verify(ID)).toMatchObject({
      ok: true,
      tornBytes: 0,
      intactThroughSeq: { main: 49 },
    });

    // A power loss that kept the file's size but not its last page: the last record whole, then zeros.
    const bytes = await readFile(file);
    const zeroed = Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.alloc(7)]);
    await writeFile(file, zeroed);
    const afterPowerLoss = new FileStore({ directory });
    expect((await afterPowerLoss.readMessages(ID, 'main')).map((m) => m.seq)).toEqual(
      Array.from({ length: 48 }, (_, i) => i + 1),
    );
    expect(await afterPowerLoss.verify(ID)).toMatchObject({
      ok: true,
      tornBytes: zeroed.length - records.at(-1)!.start,
    });
  });
});
