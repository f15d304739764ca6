import { writeFileSync } from 'node:fs';
import { loadConversations } from '../src/abcdData.js';
import { chooseDeskStore } from '../src/deskStore.js';
import { loadOntology } from '../src/ontology.js';
import { runReplay } from '../src/runReplay.js';

const conversations = await loadConversations(process.argv[2]!);
const outs: unknown[] = [];
await runReplay({ conversations, ontology: loadOntology(), deskStore: chooseDeskStore({ directory: ':memory:' }), onConversation: (o) => outs.push(o) });
writeFileSync(process.argv[3]!, JSON.stringify(outs));
