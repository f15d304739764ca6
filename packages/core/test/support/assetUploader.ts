/**
 * A child process for the asset crash test: stores one whole asset, prints `stored <id>`, then
 * uploads a never-ending stream to the same session, printing `chunk <n>` after each 64 KiB chunk,
 * until the test kills it.
 *
 * Usage: node --import tsx assetUploader.ts <directory> <sessionId>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FileStore } from '../../src/index.js';

const [directory, sessionId] = process.argv.slice(2);
const store = new FileStore({ directory: directory!, lockStaleMs: 2000 });
const whole = await store.putAsset(sessionId!, {
  name: 'first.bin',
  contentType: 'application/octet-stream',
  bytes: new Uint8Array(1000).fill(7),
});
process.stdout.write(`stored ${whole.id}\n`);

async function* endless(): AsyncGenerator<Uint8Array> {
  for (let n = 0; ; n += 1) {
    yield new Uint8Array(64 * 1024).fill(n % 256);
    process.stdout.write(`chunk ${n}\n`);
    await sleep(5);
  }
}
await store.putAsset(sessionId!, { name: 'endless.bin', contentType: 'application/octet-stream', stream: endless() });
