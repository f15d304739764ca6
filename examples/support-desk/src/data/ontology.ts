import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidInputError } from '@baton/core';
import type { Ontology } from '@baton/support-desk-models';
import { z } from 'zod';

const OntologySchema = z.object({
  intents: z.object({
    flows: z.array(z.string()).min(1),
    subflows: z.record(z.string(), z.array(z.string())),
  }),
  actions: z.record(z.string(), z.record(z.string(), z.array(z.string()))),
  values: z.object({
    enumerable: z.record(z.string(), z.array(z.string())),
  }),
});

const KnowledgeBaseSchema = z.record(z.string(), z.array(z.string()));

export type { Ontology } from '@baton/support-desk-models';

const ABCD_DIR = new URL('../../abcd/', import.meta.url);

/**
 * Loads `abcd/ontology.json` and `abcd/kb.json` (copied from ABCD, MIT) and checks that every action
 * kb.json names exists in the ontology.
 *
 * @throws {InvalidInputError} when a file does not match ABCD's format
 * @example
 * ```ts
 * const ontology = loadOntology();
 * ontology.sequences.refund_initiate; // ['pull-up-account', 'validate-purchase', …]
 * ```
 */
export function loadOntology(directory: URL = ABCD_DIR): Ontology {
  const read = (name: string): unknown => JSON.parse(readFileSync(fileURLToPath(new URL(name, directory)), 'utf8'));
  const ontology = OntologySchema.safeParse(read('ontology.json'));
  if (!ontology.success)
    throw new InvalidInputError(`abcd/ontology.json is not ABCD's ontology: ${ontology.error.message}`);
  const kb = KnowledgeBaseSchema.safeParse(read('kb.json'));
  if (!kb.success) throw new InvalidInputError(`abcd/kb.json is not ABCD's knowledge base: ${kb.error.message}`);
  const actions = new Map<string, { group: string; slots: readonly string[] }>();
  for (const [group, members] of Object.entries(ontology.data.actions)) {
    for (const [name, slots] of Object.entries(members)) actions.set(name, { group, slots });
  }
  const flowBySubflow = new Map<string, string>();
  for (const [flow, subflows] of Object.entries(ontology.data.intents.subflows)) {
    for (const subflow of subflows) flowBySubflow.set(subflow, flow);
  }
  for (const [subflow, sequence] of Object.entries(kb.data)) {
    for (const action of sequence) {
      if (!actions.has(action))
        throw new InvalidInputError(
          `abcd/kb.json: subflow ${JSON.stringify(subflow)} names the unknown action ${JSON.stringify(action)}.`,
        );
    }
  }
  return {
    flows: ontology.data.intents.flows,
    subflows: ontology.data.intents.subflows,
    actions,
    enumerable: ontology.data.values.enumerable,
    sequences: kb.data,
    flowOf: (subflow) => flowBySubflow.get(subflow),
  };
}
