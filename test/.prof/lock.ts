import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
const dir = await mkdtemp(join(tmpdir(), 'prof-'));
const N = 100;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const release = await lockfile.lock(join(dir, 's'), { realpath: false, lockfilePath: join(dir, 's.lock'), stale: 10000, retries: { retries: 10, minTimeout: 5, maxTimeout: 40 } });
  await release();
}
console.log(`lock+release ${((performance.now() - t0) / N).toFixed(3)} ms`);
await rm(dir, { recursive: true, force: true });
