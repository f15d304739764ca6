import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECKPOINT_SCHEMA_VERSION, createId, FileStore } from '@baton/core';
const dir = await mkdtemp(join(tmpdir(), 'prof-'));
const store = new FileStore({ directory: dir });
await store.createSession({ id: 's' });
const N = Number(process.env.N ?? 300);
let version = 1;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const seq = i * 2 + 1;
  const m = (s: number) => ({ id: createId(), seq: s, role: (s % 2 ? 'user' : 'assistant') as 'user', content: 'x'.repeat(200), createdAt: new Date().toISOString() });
  const r = await store.writeBatch({ sessionId: 's', branchId: 'main', messages: [m(seq), m(seq + 1)], session: { change: { lastActivityAt: new Date().toISOString() }, expectedVersion: version },
    checkpoint: { schemaVersion: CHECKPOINT_SCHEMA_VERSION, id: createId(), parentId: null, sessionId: 's', branchId: 'main', step: i + 1, createdAt: new Date().toISOString(), throughSeq: seq + 1, machine: { value: 'idle' }, pendingRequests: [], pendingWrites: [], statePatches: { session: [], branch: [] } } });
  version = r.session!.version;
}
const batch = (performance.now() - t0) / N;
const h = await open(join(dir, 'raw'), 'a');
const b = Buffer.alloc(1500, 97);
const t1 = performance.now();
for (let i = 0; i < N; i++) { await h.write(b); await h.datasync(); }
const raw = (performance.now() - t1) / N;
await h.close();
console.log(`writeBatch ${batch.toFixed(3)} ms, raw fdatasync'd 1.5 kB append ${raw.toFixed(3)} ms`);
await rm(dir, { recursive: true, force: true });
