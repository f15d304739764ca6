/**
 * A new process that opens a FileStore session as a restarted server would, and prints how many
 * bytes of JavaScript heap the open allocated (objects collected since included), for the open
 * allocation test.
 *
 *   node --import tsx openAllocation.ts <directory> <warmId> <id> <fromSeq>
 *
 * It first opens `warmId` unmeasured (module loading, schemas, the store's folders), then measures
 * opening `id`: `getSession`, `getBranch` and `readMessages` from `fromSeq` to the end. The count
 * comes from V8's sampling heap profiler at a 64-byte interval, so it is exact to about a percent.
 * Prints one line: `{"bytes": N}`.
 */
import { Session } from 'node:inspector/promises';
import { FileStore } from '../../src/index.js';

const [directory, warmId, id, fromSeqText] = process.argv.slice(2);
if (directory === undefined || warmId === undefined || id === undefined || fromSeqText === undefined)
  throw new Error('usage: openAllocation.ts <directory> <warmId> <id> <fromSeq>');

/** What a caller opening a session asks of a new store object. */
async function open(sessionId: string, fromSeq: number): Promise<void> {
  const store = new FileStore({ directory: directory! });
  try {
    await store.getSession(sessionId);
    await store.getBranch(sessionId, 'main');
    await store.readMessages(sessionId, 'main', { fromSeq });
  } finally {
    await store.close();
  }
}

interface ProfileNode {
  selfSize: number;
  children: ProfileNode[];
}
const total = (node: ProfileNode): number => node.children.reduce((sum, child) => sum + total(child), node.selfSize);

await open(warmId, 1);
const inspector = new Session();
inspector.connect();
await inspector.post('HeapProfiler.startSampling', {
  samplingInterval: 64,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
await open(id, Number(fromSeqText));
const { profile } = await inspector.post('HeapProfiler.stopSampling');
inspector.disconnect();
console.log(JSON.stringify({ bytes: total(profile.head as ProfileNode) }));
