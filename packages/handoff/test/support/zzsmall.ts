import { InMemoryStore } from '@baton/core';
import { HandoffBuilder } from '../../src/index.js';
import { deskAgents } from './helpers.js';
const { triage, billing } = deskAgents('billing', false);
const workflow = new HandoffBuilder().participants(triage, billing).store(new InMemoryStore()).build();
const turn = async (s: Awaited<ReturnType<typeof workflow.session>>, t: string) => { for await (const _ of s.send(t)) {} };
const warm = await workflow.session({ id: 'warm' }); for (let i = 0; i < 500; i++) await turn(warm, `w${i}`);
for (const round of [1, 2, 3]) {
  let cpu = 0; let n = 0;
  for (let s = 0; s < 50; s++) {
    const session = await workflow.session({ id: `s${round}-${s}` });
    for (let i = 0; i < 10; i++) await turn(session, `q${i}`);
    const c = process.cpuUsage(); for (let i = 0; i < 2; i++) await turn(session, `m${i}`); const d = process.cpuUsage(c); cpu += d.user + d.system; n += 2;
  }
  const one = await workflow.session({ id: `one${round}` });
  for (let i = 0; i < 10; i++) await turn(one, `q${i}`);
  const c = process.cpuUsage(); for (let i = 0; i < 100; i++) await turn(one, `m${i}`); const d = process.cpuUsage(c);
  console.log(`round ${round}: fresh sessions ${(cpu / n).toFixed(0)} µs/turn; one session 10..110 turns ${((d.user + d.system) / 100).toFixed(0)} µs/turn`);
}
