import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isBatonError, LogRecordCorruptError } from '@baton/core';
import { Command } from 'commander';
import { inspectSession } from './inspectSession.js';
import { openStore } from './openStore.js';
import { checkStoreLog } from './storeLog.js';

/** Where the program writes: stdout and stderr by default; tests pass their own. */
export interface ProgramOutput {
  out(text: string): void;
  err(text: string): void;
}

const processOutput: ProgramOutput = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/**
 * The `baton` command line (commander): `baton inspect --store file:DIR|mongodb://… --session ID
 * [--branch B] [--tenant T] [--out DIR] [--db NAME] [--workflow MODULE[#EXPORT]]`, and
 * `baton store verify|repair --store file:DIR --session ID` (a FileStore session log checked record
 * by record; `repair` keeps the records before the first damaged one).
 *
 * @param output where text goes (default: the process's stdout/stderr)
 * @example
 * ```ts
 * await createProgram().parseAsync(['inspect', '--store', 'file:./data', '--session', 'chat-81'], { from: 'user' });
 * ```
 */
export function createProgram(output: ProgramOutput = processOutput): Command {
  const program = new Command().name('baton').description('Baton: look at stored multi-agent sessions.').exitOverride();
  program.configureOutput({
    writeOut: (text) => output.out(text.trimEnd()),
    writeErr: (text) => output.err(text.trimEnd()),
  });
  program
    .command('inspect')
    .description("Print a stored session's timeline and write its Mermaid sequence diagram and topology graph.")
    .requiredOption('--store <spec>', 'file:DIR (a FileStore folder) or a mongodb:// url')
    .requiredOption('--session <id>', 'the session id')
    .option('--branch <id>', 'the branch', 'main')
    .option('--tenant <id>', 'the tenant of the session, if it has one')
    .option('--out <dir>', 'folder for the Mermaid files', '.')
    .option('--db <name>', 'MongoDB database (default: the url path, else baton)')
    .option(
      '--workflow <module>',
      "a module exporting the HandoffWorkflow (MODULE#EXPORT, default export 'workflow' or default), for its full topology",
    )
    .action(
      async (options: {
        store: string;
        session: string;
        branch: string;
        tenant?: string;
        out: string;
        db?: string;
        workflow?: string;
      }) => {
        const cwd = process.env.INIT_CWD ?? process.cwd();
        const store = openStore(options.store, { cwd, ...(options.db === undefined ? {} : { dbName: options.db }) });
        try {
          const topology = options.workflow === undefined ? undefined : await workflowTopology(options.workflow, cwd);
          const result = await inspectSession({
            store,
            sessionId: options.session,
            branch: options.branch,
            outDir: resolve(cwd, options.out),
            ...(options.tenant === undefined ? {} : { tenantId: options.tenant }),
            ...(topology === undefined ? {} : { topology }),
          });
          output.out(result.text);
          output.out('');
          for (const file of result.files) output.out(`wrote ${file}`);
        } finally {
          await store.close();
        }
      },
    );
  const storeCommand = program.command('store').description('Check and salvage FileStore session logs.');
  for (const repair of [false, true]) {
    storeCommand
      .command(repair ? 'repair' : 'verify')
      .description(
        repair
          ? 'Salvage a damaged session log: keep the records before the first damaged one, move the damaged file aside (never deleted).'
          : 'Check a session log record by record (checksums, JSON, continuity); exit 1 when a record is damaged.',
      )
      .requiredOption('--store <spec>', 'file:DIR (a FileStore folder)')
      .requiredOption('--session <id>', 'the session id')
      .action(async (options: { store: string; session: string }) => {
        const store = openStore(options.store, { cwd: process.env.INIT_CWD ?? process.cwd() });
        try {
          const { text, ok, report } = await checkStoreLog({ store, sessionId: options.session, repair });
          output.out(text);
          if (!ok && report.damage !== undefined) {
            const { record, offset } = report.damage;
            throw new LogRecordCorruptError(
              `The session log of ${options.session} is damaged at record ${record} (byte ${offset}); see above.`,
              report.file,
              record,
              offset,
              report.intactThroughSeq,
            );
          }
        } finally {
          await store.close();
        }
      });
  }
  return program;
}

/** `workflow.toMermaid()` of the workflow a module exports (`MODULE#EXPORT`; default the `workflow` export, else the default export; a function is called). */
async function workflowTopology(spec: string, cwd: string): Promise<string> {
  const [path, name] = spec.split('#') as [string, string | undefined];
  const module = (await import(pathToFileURL(resolve(cwd, path)).href)) as Record<string, unknown>;
  let value = name === undefined ? (module.workflow ?? module.default) : module[name];
  if (typeof value === 'function') value = await (value as () => unknown)();
  if (typeof (value as { toMermaid?: unknown })?.toMermaid !== 'function') {
    throw new Error(
      `--workflow ${JSON.stringify(spec)} exports no HandoffWorkflow (an object with toMermaid()) as ${JSON.stringify(name ?? 'workflow or default')}.`,
    );
  }
  return (value as { toMermaid(): string }).toMermaid();
}

/**
 * Runs the program on `argv` (as `process.argv`) and sets `process.exitCode`: 0, or 1 with the error's message on stderr.
 */
export async function runProgram(argv: readonly string[], output: ProgramOutput = processOutput): Promise<number> {
  try {
    await createProgram(output).parseAsync([...argv]);
    return 0;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('commander.'))
      return (error as { exitCode?: number }).exitCode ?? 1;
    output.err(isBatonError(error) ? `${error.name}: ${error.message}` : String((error as Error)?.message ?? error));
    return 1;
  }
}
