import { customerMessages, loadConversations } from '../src/data/abcdData.js';
import { crossValidationFolds } from '../src/data/folds.js';
import { loadOntology } from '../src/data/ontology.js';
import { caseTrainingTexts, ROUTER_CLASSIFIER, routerTrainingTexts } from '../src/desk/deskModels.js';
import { openingText } from '../src/data/abcdData.js';
import { specialistForFlow } from '../src/desk/specialists.js';
import { NaiveBayesClassifier } from '../src/models/textClassifier.js';
const conversations = await loadConversations('/work/shared/data/abcd/abcd-dev-400.jsonl');
const ontology = loadOntology();
const tally = new Map<string, number>();
let flowRight = 0, subRight = 0, specRight = 0;
const buckets = new Map<number, [number, number]>();
for (const fold of crossValidationFolds(conversations)) {
  const model = new NaiveBayesClassifier(caseTrainingTexts(fold.train, ontology, 'whole'), { calibrationFolds: 3 });
  const router = new NaiveBayesClassifier(fold.train.flatMap(routerTrainingTexts), { ...ROUTER_CLASSIFIER, calibrationFolds: 0 });
  for (const c of fold.test) {
    const routed = specialistForFlow(router.classify(openingText(c))!.label);
    const r = model.classify(customerMessages(c).join('\n'))!;
    const flow = ontology.flowOf(r.label);
    if (flow === c.flow) flowRight++;
    if (r.label === c.subflow) subRight++;
    // specialist probability
    const spec = new Map<string, number>();
    for (const p of r.probabilities) { const s = specialistForFlow(ontology.flowOf(p.label)!)!; spec.set(s, (spec.get(s) ?? 0) + p.probability); }
    const best = [...spec.entries()].sort((a, b) => b[1] - a[1])[0]!;
    const right = best[0] === specialistForFlow(c.flow);
    if (right) specRight++;
    for (const t of [0.8, 0.9, 0.95, 0.99]) if (best[1] >= t && best[0] !== routed) { const k = `${t} ${routed === specialistForFlow(c.flow) ? 'break' : right ? 'fix' : 'wrong-to-wrong'}`; tally.set(k, (tally.get(k) ?? 0) + 1); }
    const bin = Math.min(9, Math.floor(best[1] * 10));
    const b = buckets.get(bin) ?? [0, 0]; b[0]++; if (right) b[1]++; buckets.set(bin, b);
  }
}
console.log({ flowRight, subRight, specRight });
console.log([...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([k, [n, r]]) => `${k / 10}: ${r}/${n}`).join('\n'));
console.log([...tally.entries()].sort());
