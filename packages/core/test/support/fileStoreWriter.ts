/**
 * A separate process that writes to a FileStore, for the crash and multi-process tests.
 *
 *   node --import tsx fileStoreWriter.ts <mode> <directory> <sessionId> <count> <payloadBytes>
 *
 * Modes:
 * - `loop`: appends `count` messages to `main` in batches of 8 (each `payloadBytes` long), printing
 *   `committed <lastSeq>` after each append returns. The test kills it with SIGKILL mid-way.
 * - `contend`: appends `count` messages one at a time to a branch another process appends to as
 *   well: reads the branch's end, appends the next seq, and on a ConcurrencyError reads again and
 *   retries. Prints `committed <seq> <id>` per message and `conflicts <n>` at the end.
 */
import { ConcurrencyError, createId, type Message } from '../../src/index.js';
import { FileStore } from '../../src/store/file/fileStore.js';

const [mode, directory, sessionId, countText, payloadText] = process.argv.slice(2);
if (directory === undefined || sessionId === undefined)
  throw new Error('usage: fileStoreWriter.ts <mode> <directory> <sessionId> <count> <payloadBytes>');
const count = Number(countText ?? '10');
const payload = 'x'.repeat(Number(payloadText ?? '16'));
const store = new FileStore({ directory, lockStaleMs: 2000 });
const message = (seq: number): Message => ({
  id: createId(),
  seq,
  role: seq % 2 === 0 ? 'assistant' : 'user',
  content: `${process.pid} #${seq} ${payload}`,
  createdAt: new Date().toISOString(),
});

if (mode === 'loop') {
  let seq = (await store.readMessages(sessionId, 'main')).length;
  for (let written = 0; written < count; written += 8) {
    const batch = Array.from({ length: 8 }, (_, index) => message(seq + 1 + index));
    await store.appendMessages(sessionId, 'main', batch);
    seq += batch.length;
    process.stdout.write(`committed ${seq}\n`);
  }
} else if (mode === 'contend') {
  let conflicts = 0;
  for (let written = 0; written < count; ) {
    const next = (await store.readMessages(sessionId, 'main')).length + 1;
    const candidate = message(next);
    try {
      await store.appendMessages(sessionId, 'main', [candidate]);
      process.stdout.write(`committed ${next} ${candidate.id}\n`);
      written += 1;
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      conflicts += 1;
    }
  }
  process.stdout.write(`conflicts ${conflicts}\n`);
} else {
  throw new Error(`unknown mode ${JSON.stringify(mode)}`);
}
await store.close();
