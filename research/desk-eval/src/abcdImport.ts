import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { InvalidInputError, NotFoundError } from '@baton/core';
import type { Ontology } from '@baton/example-support-desk/data/ontology.js';
import type { AbcdConversation } from '@baton/support-desk-models';
import { z } from 'zod';

/** The splits of ABCD's release. */
export const ABCD_SPLITS = ['train', 'dev', 'test'] as const;
/** `'train' | 'dev' | 'test'`. */
export type AbcdSplit = (typeof ABCD_SPLITS)[number];

const ReleaseConversationSchema = z.object({
  convo_id: z.union([z.number(), z.string()]),
  scenario: z.object({ flow: z.string().min(1), subflow: z.string().min(1) }),
  original: z.array(z.tuple([z.string(), z.string()])),
});
type ReleaseConversation = z.infer<typeof ReleaseConversationSchema>;

/** A line of an imported file: a conversation plus where it came from. */
export type ImportedConversation = AbcdConversation & { source_split: AbcdSplit; subflow_raw: string };

/** What {@link convertAbcdSplit} gives: the conversations, and the ones it left out with why. */
export interface AbcdImport {
  conversations: ImportedConversation[];
  /** Conversations of the split in the release. */
  total: number;
  /** Left out because their flow or subflow is not in the ontology, by `flow/subflow`. */
  skipped: Record<string, number>;
}

/**
 * Reads ABCD's public release (`abcd_v1.1.json.gz` from github.com/asappresearch/abcd, MIT): a
 * gzipped JSON object `{ train: […], dev: […], test: […] }`, and returns one split's raw conversations.
 *
 * @param file path of the `.json.gz` file
 * @param split `'train'`, `'dev'` or `'test'`
 * @returns the split's conversations as the release has them (`convo_id`, `scenario`, `original`, …)
 * @throws {NotFoundError} when the file does not exist
 * @throws {InvalidInputError} when it is not gzip, not JSON, has no such split, or a conversation lacks
 *   `convo_id`, `scenario.flow`, `scenario.subflow` or `original` (the message names its index)
 * @example
 * ```ts
 * const dev = await readAbcdRelease('abcd_v1.1.json.gz', 'dev');
 * ```
 */
export async function readAbcdRelease(file: string, split: AbcdSplit): Promise<ReleaseConversation[]> {
  let packed: Buffer;
  try {
    packed = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new NotFoundError(
        `No ABCD release at ${file}. Download abcd_v1.1.json.gz from github.com/asappresearch/abcd (its data folder).`,
        { cause: error },
      );
    throw error;
  }
  let release: unknown;
  try {
    release = JSON.parse((await promisify(gunzip)(packed)).toString('utf8'));
  } catch (error) {
    throw new InvalidInputError(
      `${file} is not a gzipped JSON file (${(error as Error).message}); expected ABCD's abcd_v1.1.json.gz.`,
      { cause: error },
    );
  }
  const conversations =
    typeof release === 'object' && release !== null ? (release as Record<string, unknown>)[split] : undefined;
  if (!Array.isArray(conversations)) {
    const keys = typeof release === 'object' && release !== null ? Object.keys(release).join(', ') : typeof release;
    throw new InvalidInputError(
      `${file} has no "${split}" list of conversations (it holds: ${keys || 'nothing'}); expected ABCD's { train, dev, test } object.`,
    );
  }
  return conversations.map((raw, index) => {
    const parsed = ReleaseConversationSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new InvalidInputError(`${file}: ${split}[${index}] is not an ABCD conversation (${issues}).`);
    }
    return parsed.data;
  });
}

/** The ontology subflow a release's subflow names: itself, or the one it starts with (`jacket_how_2` → `jacket`). */
function subflowOf(flow: string, raw: string, ontology: Ontology): string | undefined {
  const known = ontology.subflows[flow] ?? [];
  return known.includes(raw) ? raw : known.find((subflow) => raw.startsWith(`${subflow}_`));
}

const ROLES = new Set(['customer', 'agent', 'action']);

/**
 * Converts one split of ABCD's release into the desk's format: id `abcd-<split>-<convo_id, 4 digits>`,
 * ABCD's flow, the ontology's subflow (`jacket_how_2` becomes `jacket`; the release's name is kept as
 * `subflow_raw`), and the turns of `original` as `{ role, text }`. With `perFlow`, each flow keeps the
 * `perFlow` conversations with the lowest `sha256("abcd-<split>-v1:" + id)` (a deterministic sample).
 * The result is ordered by flow (ontology order), then by that hash.
 *
 * @param conversations a split as {@link readAbcdRelease} returns it
 * @param options `{ split, ontology, perFlow? }`
 * @returns `{ conversations, total, skipped }`: a conversation whose flow or subflow the ontology lacks is skipped and counted
 * @throws {InvalidInputError} when a turn's speaker is not customer, agent or action
 * @example
 * ```ts
 * const { conversations } = convertAbcdSplit(await readAbcdRelease(file, 'dev'), { split: 'dev', ontology: loadOntology(), perFlow: 40 });
 * ```
 */
export function convertAbcdSplit(
  conversations: readonly ReleaseConversation[],
  options: { split: AbcdSplit; ontology: Ontology; perFlow?: number },
): AbcdImport {
  const { split, ontology } = options;
  const skipped: Record<string, number> = {};
  const converted: Array<ImportedConversation & { rank: string }> = [];
  for (const raw of conversations) {
    const { flow, subflow: subflowRaw } = raw.scenario;
    const subflow = subflowOf(flow, subflowRaw, ontology);
    if (subflow === undefined) {
      skipped[`${flow}/${subflowRaw}`] = (skipped[`${flow}/${subflowRaw}`] ?? 0) + 1;
      continue;
    }
    const id = `abcd-${split}-${String(raw.convo_id).padStart(4, '0')}`;
    const turns = raw.original.map(([speaker, text]) => {
      if (!ROLES.has(speaker))
        throw new InvalidInputError(
          `ABCD conversation ${raw.convo_id} has a turn by ${JSON.stringify(speaker)}; expected customer, agent or action.`,
        );
      return { role: speaker as 'customer' | 'agent' | 'action', text };
    });
    const rank = createHash('sha256').update(`abcd-${split}-v1:${id}`).digest('hex');
    converted.push({ id, source_split: split, flow, subflow, subflow_raw: subflowRaw, turns, rank });
  }
  const order = new Map(ontology.flows.map((flow, index) => [flow, index]));
  converted.sort(
    (a, b) => (order.get(a.flow) ?? 0) - (order.get(b.flow) ?? 0) || (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0),
  );
  const taken = new Map<string, number>();
  const kept = converted.filter((c) => {
    const n = taken.get(c.flow) ?? 0;
    taken.set(c.flow, n + 1);
    return options.perFlow === undefined || n < options.perFlow;
  });
  return {
    conversations: kept.map(({ rank: _rank, ...conversation }) => conversation),
    total: conversations.length,
    skipped,
  };
}
