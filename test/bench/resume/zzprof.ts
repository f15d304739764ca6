import { InMemoryStore } from '@baton/core';
import { approvalDesk } from './approvalDesk.js';

const TURNS = Number(process.env.TURNS ?? 500);
const store = new InMemoryStore();
const tmpl = new InMemoryStore();
const s0 = await approvalDesk(tmpl).session({ id: 't' });
for await (const _ of s0.send('x')) {}
for await (const _ of s0.respond(s0.pendingRequests[0]!.id, { approved: true })) {}
const msgs = await tmpl.readMessages('t', 'main');
const ids: string[] = [];
for (let k = 0; k < 30; k++) {
  const id = `s${k}`; ids.push(id);
  await store.createSession({ id });
  const out = [];
  for (let t = 0; t < TURNS; t++) for (const m of msgs) { const seq = out.length + 1; out.push({ ...m, id: `m${seq}`, seq, ...(m.toolCalls ? { toolCalls: m.toolCalls.map((c) => ({ ...c, id: c.id + t })) } : {}), ...(m.toolCallId ? { toolCallId: m.toolCallId + t } : {}) }); }
  await store.appendMessages(id, 'main', out);
  const s = await approvalDesk(store).session({ id });
  for await (const _ of s.send('y')) {}
}
const { Session } = await import('node:inspector/promises');
const insp = new Session(); insp.connect();
await insp.post('Profiler.enable'); await insp.post('Profiler.setSamplingInterval', { interval: 100 }); await insp.post('Profiler.start');
const times: string[] = [];
for (const id of ids) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const s = await approvalDesk(store).session({ id });
  const t1 = performance.now();
  for await (const _ of s.respond(s.pendingRequests[0]!.id, { approved: true })) {}
  const c = process.cpuUsage(c0);
  times.push(`${(t1 - t0).toFixed(1)}/${(performance.now() - t1).toFixed(1)}/cpu${((c.user + c.system) / 1000).toFixed(1)}`);
}
console.log(times.join(' '));
const { profile } = await insp.post('Profiler.stop');
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map<string, number>();
const dt = profile.timeDeltas!;
profile.samples!.forEach((id, i) => {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!; const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}`;
    if (seen.has(k)) continue; seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + (dt[i] ?? 0));
  }
});
console.log([...incl].filter(([k]) => /baton|src|xstate|zod|\(garbage/.test(k) || true).sort((a, b) => b[1] - a[1]).slice(0, 45).map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('\n'));
