import { readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '@baton/core';

/** The repository root (three folders above this file's folder). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The desk's own demo conversations, shipped with the example: `examples/support-desk/conversations/demo.jsonl`. */
export const DEMO_DATA_FILE = fileURLToPath(new URL('../../conversations/demo.jsonl', import.meta.url));

/** The ABCD sample's file name, looked for in a `BATON_ABCD` folder. */
export const ABCD_SAMPLE_NAME = 'abcd-dev-400.jsonl';

/** Where the conversations of a run come from: the file, how it was chosen, and a label for the `Data:` line. */
export interface DataSource {
  /** Absolute path of the JSON Lines file. */
  file: string;
  /** `'option'` (`--data`), `'env'` (`BATON_ABCD`) or `'demo'`. */
  origin: 'option' | 'env' | 'demo';
  /** `'demo conversations'`, `'ABCD sample'` or `'conversations'`. */
  label: string;
}

/** Options of {@link resolveDataSource}. */
export interface ResolveDataOptions {
  /** `--data FILE`, already absolute. */
  data?: string | undefined;
  /** The value of `BATON_ABCD` (default `process.env.BATON_ABCD`). */
  env?: string | undefined;
  /** The folder a relative `BATON_ABCD` is taken from (default: `INIT_CWD`, the folder `pnpm` was run in, else the current folder). */
  cwd?: string;
}

const exists = async (path: string) => stat(path).catch(() => undefined);

function labelOf(file: string, _origin: DataSource['origin']): string {
  if (file === DEMO_DATA_FILE) return 'demo conversations';
  if (file.endsWith(ABCD_SAMPLE_NAME)) return 'ABCD sample';
  return 'conversations';
}

/**
 * Finds the conversations a `start` or `chat` run uses, in this order: `--data FILE`; the env var
 * `BATON_ABCD` (a file, or a folder holding `abcd-dev-400.jsonl` or exactly one `*.jsonl`); else the
 * demo conversations shipped with the example ({@link DEMO_DATA_FILE}). Nothing outside the repository is
 * read unless named.
 *
 * @param options `{ data?, env?, cwd? }`
 * @returns `{ file, origin, label }`; a `--data` file is returned as given (loading it reports a missing file)
 * @throws {NotFoundError} when `BATON_ABCD` names nothing, or a folder without `abcd-dev-400.jsonl`
 *   and with no or several `*.jsonl` files
 * @example
 * ```ts
 * const { file, label } = await resolveDataSource({ env: process.env.BATON_ABCD }); // label 'demo conversations' on a fresh clone
 * ```
 */
export async function resolveDataSource(options: ResolveDataOptions = {}): Promise<DataSource> {
  if (options.data !== undefined)
    return { file: options.data, origin: 'option', label: labelOf(options.data, 'option') };
  const env = 'env' in options ? options.env : process.env.BATON_ABCD;
  if (env !== undefined && env.trim() !== '') {
    const file = await fileInEnv(resolve(options.cwd ?? process.env.INIT_CWD ?? process.cwd(), env));
    return { file, origin: 'env', label: labelOf(file, 'env') };
  }
  return { file: DEMO_DATA_FILE, origin: 'demo', label: 'demo conversations' };
}

async function fileInEnv(env: string): Promise<string> {
  const found = await exists(env);
  if (found === undefined)
    throw new NotFoundError(
      `BATON_ABCD=${env} names no file or folder. Set it to a JSON Lines file of conversations, or to a folder holding ${ABCD_SAMPLE_NAME} or one *.jsonl file; unset it to run on the demo conversations.`,
    );
  if (!found.isDirectory()) return env;
  const names = (await readdir(env)).filter((name) => name.endsWith('.jsonl')).sort();
  if (names.includes(ABCD_SAMPLE_NAME)) return join(env, ABCD_SAMPLE_NAME);
  if (names.length === 1) return join(env, names[0]!);
  throw new NotFoundError(
    names.length === 0
      ? `BATON_ABCD=${env} is a folder without ${ABCD_SAMPLE_NAME} or any *.jsonl file.`
      : `BATON_ABCD=${env} holds several *.jsonl files (${names.join(', ')}) and no ${ABCD_SAMPLE_NAME}; set BATON_ABCD to the file to use.`,
  );
}

/**
 * A file's path as the `Data:` line shows it: relative to the repository when inside it, else absolute.
 * @example
 * ```ts
 * displayPath(DEMO_DATA_FILE); // 'examples/support-desk/conversations/demo.jsonl'
 * ```
 */
export function displayPath(file: string): string {
  const inRepo = relative(REPOSITORY_ROOT, file);
  return inRepo.startsWith('..') ? file : inRepo;
}
