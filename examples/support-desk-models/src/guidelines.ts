import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidInputError } from '@baton/core';
import { z } from 'zod';
import type { Ontology } from './ontology.js';

const GuidelineActionSchema = z.object({
  type: z.string(),
  button: z.string(),
  text: z.string(),
  subtext: z.array(z.string()),
});

const GuidelinesSchema = z.record(
  z.string(),
  z.object({
    description: z.string(),
    subflows: z.record(
      z.string(),
      z.object({ actions: z.array(GuidelineActionSchema), instructions: z.array(z.string()) }),
    ),
  }),
);

/** The written agent guideline of one subflow (a case), keyed by the ontology's names. */
export interface Guideline {
  /** The ontology's flow (`product_defect`). */
  flow: string;
  /** The ontology's subflow (`refund_initiate`). */
  subflow: string;
  /** The guideline's own titles: the flow's (`Product Defect`) and the subflow's (`Initiate Refund`). */
  flowTitle: string;
  subflowTitle: string;
  /** What the flow is about, in the guideline's words (`refunds and returns`). */
  flowDescription: string;
  /** The subflow's instructions: who the customer is and what they ask (one string per paragraph). */
  instructions: readonly string[];
  /** The steps the agent takes: each step's text and its sub-points, in order. */
  steps: ReadonlyArray<{ button: string; text: string; subtext: readonly string[] }>;
}

/**
 * The guideline titles whose ontology subflow is not their title in snake case (`Reset Two-Factor Auth` →
 * `reset_2fa`), per ontology flow. The others are matched by title: `Status Mystery Fee` → `status_mystery_fee`.
 */
const SUBFLOW_BY_TITLE: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  product_defect: {
    'Initiate Refund': 'refund_initiate',
    'Update Refund': 'refund_update',
    'Return Due to Stain': 'return_stain',
    'Return Due to Color': 'return_color',
    'Return Due to Size': 'return_size',
  },
  account_access: { 'Reset Two-Factor Auth': 'reset_2fa' },
  troubleshoot_site: {
    'Invalid Credit Card': 'credit_card',
    'Cart Not Updating': 'shopping_cart',
    'Search Not Working': 'search_results',
    'Website Too Slow': 'slow_speed',
  },
  purchase_dispute: {
    'Out-of-Stock General': 'out_of_stock_general',
    'Out-of-Stock One Item': 'out_of_stock_one_item',
  },
  shipping_issue: {
    'Shipping Status': 'status',
    'Manage Shipping': 'manage',
    'Missing Item': 'missing',
    'Shipping Cost': 'cost',
  },
  single_item_query: { 'Boots FAQ': 'boots', 'Shirt FAQ': 'shirt', 'Jeans FAQ': 'jeans', 'Jacket FAQ': 'jacket' },
  storewide_query: {
    'Pricing FAQ': 'pricing',
    'Membership FAQ': 'membership',
    'Timing FAQ': 'timing',
    'Policy FAQ': 'policy',
  },
};

/** `Single-Item Query` → `single_item_query`. */
const snakeCase = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

/** ABCD's `guidelines.json`, copied unchanged beside this module (MIT, `guidelines.LICENSE`). */
export const GUIDELINES_FILE = fileURLToPath(new URL('./guidelines.json', import.meta.url));

/**
 * Loads ABCD's written agent guidelines (`guidelines.json`, copied from github.com/asappresearch/abcd
 * at commit 6b8700ce, MIT) and names each subflow's guideline by the ontology's flow and subflow.
 *
 * @param ontology the ontology whose flows and subflows the guidelines must cover
 * @param file the guidelines file (default {@link GUIDELINES_FILE})
 * @returns one guideline per ontology subflow, in the ontology's order (55 for ABCD)
 * @throws {InvalidInputError} when the file is not in ABCD's guidelines format, names a flow or subflow the
 *   ontology lacks, or lacks one of the ontology's subflows
 * @example
 * ```ts
 * const guidelines = loadGuidelines(loadOntology());
 * guidelines.find((g) => g.subflow === 'reset_2fa')?.subflowTitle; // 'Reset Two-Factor Auth'
 * ```
 */
export function loadGuidelines(ontology: Ontology, file: string = GUIDELINES_FILE): Guideline[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InvalidInputError(`${file} is not a JSON file: ${(error as Error).message}`);
  }
  const parsed = GuidelinesSchema.safeParse(raw);
  if (!parsed.success) throw new InvalidInputError(`${file} is not ABCD's guidelines: ${parsed.error.message}`);
  const found = new Map<string, Guideline>();
  for (const [flowTitle, flowGuide] of Object.entries(parsed.data)) {
    const flow = snakeCase(flowTitle);
    const known = ontology.subflows[flow];
    if (known === undefined)
      throw new InvalidInputError(
        `${file}: the flow ${JSON.stringify(flowTitle)} is not one of the ontology's (${ontology.flows.join(', ')}).`,
      );
    for (const [subflowTitle, guide] of Object.entries(flowGuide.subflows)) {
      const subflow = SUBFLOW_BY_TITLE[flow]?.[subflowTitle] ?? snakeCase(subflowTitle);
      if (!known.includes(subflow))
        throw new InvalidInputError(
          `${file}: ${JSON.stringify(`${flowTitle} / ${subflowTitle}`)} names no subflow of ${flow} (${known.join(', ')}).`,
        );
      found.set(subflow, {
        flow,
        subflow,
        flowTitle,
        subflowTitle,
        flowDescription: flowGuide.description,
        instructions: guide.instructions,
        steps: guide.actions.map(({ button, text, subtext }) => ({ button, text, subtext })),
      });
    }
  }
  const missing = ontology.flows.flatMap((flow) =>
    (ontology.subflows[flow] ?? []).filter((subflow) => !found.has(subflow)),
  );
  if (missing.length > 0) throw new InvalidInputError(`${file} has no guideline for ${missing.join(', ')}.`);
  return ontology.flows.flatMap((flow) => (ontology.subflows[flow] ?? []).map((subflow) => found.get(subflow)!));
}

/**
 * What a guideline says the customer wants, as a text a classifier can learn: the flow's title and
 * description, the subflow's title and its instructions (who the customer is and what they ask). The
 * agent's steps are left out: every flow's steps say "pull up the account" and the like, which name the
 * agent's work, not the customer's need.
 *
 * @example
 * ```ts
 * guidelineText(reset2fa); // 'Account Access. username, password, and two-factor authentication. Reset Two-Factor Auth. …'
 * ```
 */
export function guidelineText(guideline: Guideline): string {
  return [guideline.flowTitle, guideline.flowDescription, guideline.subflowTitle, ...guideline.instructions].join('. ');
}
