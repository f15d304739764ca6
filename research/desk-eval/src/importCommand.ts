import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { type AbcdSplit, convertAbcdSplit, readAbcdRelease } from './abcdImport.js';

/** Options of the `import` command (see `cli.ts`). */
export interface ImportCommandOptions {
  /** ABCD's release, `abcd_v1.1.json.gz` (absolute). */
  file: string;
  split: AbcdSplit;
  /** Keep this many conversations per flow (a deterministic sample); all when undefined. */
  perFlow?: number;
  /** Where to write (absolute); default `abcd-<split>.jsonl`, or `abcd-<split>-<count>.jsonl` with `perFlow`, in `directory`. */
  out?: string;
  /** The folder a default `out` goes to (the caller's folder). */
  directory: string;
}

/**
 * The `import` command (`pnpm abcd:import`): converts one split of ABCD's public release into the
 * desk's JSON Lines format (see `convertAbcdSplit`), writes it, and prints what it wrote and how to run on it.
 *
 * @param options `{ file, split, perFlow?, out?, directory }`
 * @returns the path written and the number of conversations in it
 * @throws {NotFoundError} when the release file does not exist
 * @throws {InvalidInputError} when it is not ABCD's gzipped `{ train, dev, test }` JSON
 * @example
 * ```ts
 * await importCommand({ file: '/data/abcd_v1.1.json.gz', split: 'dev', perFlow: 40, directory: process.cwd() }); // writes abcd-dev-400.jsonl
 * ```
 */
export async function importCommand(options: ImportCommandOptions): Promise<{ out: string; count: number }> {
  const raw = await readAbcdRelease(options.file, options.split);
  const imported = convertAbcdSplit(raw, {
    split: options.split,
    ontology: loadOntology(),
    ...(options.perFlow === undefined ? {} : { perFlow: options.perFlow }),
  });
  const count = imported.conversations.length;
  const out =
    options.out ??
    join(options.directory, `abcd-${options.split}${options.perFlow === undefined ? '' : `-${count}`}.jsonl`);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, imported.conversations.map((c) => `${JSON.stringify(c)}\n`).join(''));
  const perFlow = new Map<string, number>();
  for (const c of imported.conversations) perFlow.set(c.flow, (perFlow.get(c.flow) ?? 0) + 1);
  const skipped = Object.entries(imported.skipped).map(([name, n]) => `${n} × ${name}`);
  console.log(
    `Wrote ${count} conversations of ABCD's ${options.split} split (${imported.total} in the release) to ${out}.`,
  );
  console.log(`Per flow: ${[...perFlow.entries()].map(([flow, n]) => `${flow} ${n}`).join(', ')}.`);
  if (skipped.length > 0) console.log(`Skipped (flow/subflow not in the ontology): ${skipped.join(', ')}.`);
  console.log(`Run the desk on them: BATON_ABCD=${out} npx --yes pnpm@10.34.8 start`);
  return { out, count };
}
