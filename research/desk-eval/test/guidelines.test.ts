import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import {
  CASE_CLASSIFIER,
  CASE_CLASSIFIER_KIND,
  caseTrainingTexts,
  createTextClassifier,
  GUIDELINES_FILE,
  guidelineText,
  guidelineTrainingTexts,
  loadConversations,
  loadGuidelines,
} from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-guidelines-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadGuidelines', () => {
  it("names every one of the ontology's 55 subflows by ABCD's written guideline, in the ontology's order", () => {
    const ontology = loadOntology();
    const guidelines = loadGuidelines(ontology);
    expect(guidelines.map((g) => g.subflow)).toEqual(ontology.flows.flatMap((flow) => ontology.subflows[flow]));
    expect(guidelines).toHaveLength(55);
    expect(guidelines.every((g) => ontology.flowOf(g.subflow) === g.flow)).toBe(true);
    const reset = guidelines.find((g) => g.subflow === 'reset_2fa')!;
    expect(reset).toMatchObject({
      flow: 'account_access',
      flowTitle: 'Account Access',
      subflowTitle: 'Reset Two-Factor Auth',
    });
    const cost = guidelines.find((g) => g.flow === 'shipping_issue' && g.subflow === 'cost')!;
    expect(cost.subflowTitle).toBe('Shipping Cost');
    expect(guidelineText(cost)).toContain('shipping fee waived');
    // The steps are kept, though the training text leaves them out.
    expect(cost.steps.length).toBeGreaterThan(0);
    expect(guidelineText(cost)).not.toContain(cost.steps[0]!.text);
  });

  it('travels with its MIT licence', () => {
    expect(readFileSync(join(GUIDELINES_FILE, '..', 'guidelines.LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) 2021 ASAPP Research/,
    );
  });

  it('refuses a file that is not JSON, not in the format, names an unknown subflow, or lacks one', async () => {
    const ontology = loadOntology();
    const original = JSON.parse(readFileSync(GUIDELINES_FILE, 'utf8')) as Record<
      string,
      { description: string; subflows: Record<string, unknown> }
    >;
    const write = async (name: string, content: string) => {
      const file = join(dir, name);
      await writeFile(file, content);
      return file;
    };
    expect(() => loadGuidelines(ontology, join(dir, 'missing.json'))).toThrow(InvalidInputError);
    expect(() => loadGuidelines(ontology, join(dir, 'missing.json'))).toThrow(/is not a JSON file/);
    const notJson = await write('not.json', '{"Product Defect": ');
    expect(() => loadGuidelines(ontology, notJson)).toThrow(/is not a JSON file/);
    const wrongShape = await write('shape.json', JSON.stringify({ 'Product Defect': { subflows: {} } }));
    expect(() => loadGuidelines(ontology, wrongShape)).toThrow(/is not ABCD's guidelines/);
    const unknownFlow = await write(
      'flow.json',
      JSON.stringify({ ...original, 'Gift Wrapping': { description: 'x', subflows: {} } }),
    );
    expect(() => loadGuidelines(ontology, unknownFlow)).toThrow(
      /the flow "Gift Wrapping" is not one of the ontology's/,
    );
    const renamed = structuredClone(original);
    const defect = renamed['Product Defect']!.subflows;
    defect['Refund Mystery'] = defect['Initiate Refund'];
    const unknownSubflow = await write('subflow.json', JSON.stringify(renamed));
    expect(() => loadGuidelines(ontology, unknownSubflow)).toThrow(
      /"Product Defect \/ Refund Mystery" names no subflow of product_defect/,
    );
    delete defect['Refund Mystery'];
    delete defect['Initiate Refund'];
    const lacking = await write('lacking.json', JSON.stringify(renamed));
    expect(() => loadGuidelines(ontology, lacking)).toThrow(/has no guideline for refund_initiate\./);
  });
});

describe('guidelineTrainingTexts', () => {
  it('labels each guideline with its flow or subflow, copies it, and keeps it out of the calibration', () => {
    const guidelines = loadGuidelines(loadOntology());
    const byFlow = guidelineTrainingTexts(guidelines, 'flow', 3);
    expect(byFlow).toHaveLength(165);
    expect(new Set(byFlow.map((t) => t.label)).size).toBe(10);
    expect(byFlow.every((t) => t.calibrate === false)).toBe(true);
    expect(guidelineTrainingTexts(guidelines, 'subflow', 1).map((t) => t.label)).toEqual(
      guidelines.map((g) => g.subflow),
    );
    expect(guidelineTrainingTexts(guidelines, 'subflow', 0)).toEqual([]);
  });

  it('teaches a case classifier a case no conversation showed it', async () => {
    const ontology = loadOntology();
    const guidelines = loadGuidelines(ontology);
    // Every demo conversation of shipping_issue except those about the shipping cost.
    const training = (await loadConversations(DEMO_DATA_FILE)).filter(
      (c) => c.flow === 'shipping_issue' && c.subflow !== 'cost',
    );
    expect(training.length).toBeGreaterThan(3);
    const labels = ontology.subflows.shipping_issue!;
    const customer = 'The shipping fee on my order is way too high, can you waive it or refund the shipping?';
    const without = createTextClassifier(
      CASE_CLASSIFIER_KIND,
      caseTrainingTexts(training, ontology, 'whole').filter((t) => !t.id.startsWith('name-')),
      { ...CASE_CLASSIFIER, labels },
    );
    expect(without.labels).not.toContain('cost');
    const withGuidelines = createTextClassifier(
      CASE_CLASSIFIER_KIND,
      [
        ...caseTrainingTexts(training, ontology, 'whole').filter((t) => !t.id.startsWith('name-')),
        ...guidelineTrainingTexts(guidelines, 'subflow', 3),
      ],
      { ...CASE_CLASSIFIER, labels },
    );
    expect(withGuidelines.classify(customer)?.label).toBe('cost');
  });
});
