import { loadConversations } from '../src/data/abcdData.js';
import { loadOntology } from '../src/data/ontology.js';
import { chooseDeskStore } from '../src/desk/deskStore.js';
import { runReplay } from '../src/replay/runReplay.js';
const all = await loadConversations('/work/shared/data/abcd/abcd-dev-400.jsonl');
const ids = new Set(process.argv.slice(2));
const conversations = all.filter((c) => ids.size === 0 ? all.indexOf(c) < 60 : ids.has(c.id));
const report = await runReplay({
  conversations, training: all.filter((c) => !conversations.includes(c)), evaluation: 'held-out', ontology: loadOntology(), deskStore: chooseDeskStore({ directory: ':memory:' }),
  onEvent: (e) => { if (e.type === 'handoff' && (e.to === 'triage' ? true : e.from === 'triage' && !/continuing/.test(e.reason ?? ''))) console.log(`${e.from} -> ${e.to}: ${e.reason}`); if (e.type === 'session.closed') console.log('---'); },
});
for (const c of report.conversations) console.log(c.id, c.flow, c.subflow, c.routedTo, c.predictedSubflow);
console.log(report.casework.subflow);
