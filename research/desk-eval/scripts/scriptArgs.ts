import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { Command } from 'commander';

/** A script's command line as {@link scriptArgs} parses it: the conversations file and the flags given. */
export interface ScriptArgs<Flag extends string> {
  /** The conversations file (JSON Lines): the one given, else the desk's demo conversations. */
  file: string;
  /** Each flag, by its name without the dashes (`'case-messages'`), `true` when given. */
  flags: Record<Flag, boolean>;
}

/**
 * Parses an evaluation script's command line with commander: an optional conversations FILE (required with
 * `requireFile`) and on/off flags, each with its help text. `--help` prints the usage; an unknown option or a
 * missing FILE exits with commander's message.
 *
 * @param name the script's file name, e.g. `caseCv.ts`
 * @param description what the script prints
 * @param flags the flags (`'--svm'` → its help text)
 * @example
 * ```ts
 * const { file, flags } = scriptArgs('caseCv.ts', 'Nested CV of the case classifiers.', { '--svm': 'compare with linear SVMs' });
 * ```
 */
export function scriptArgs<Flag extends `--${string}`>(
  name: string,
  description: string,
  flags: Record<Flag, string>,
  requireFile = false,
): ScriptArgs<Flag extends `--${infer F}` ? F : never> {
  const program = new Command().name(name).description(description);
  program.argument(
    requireFile ? '<file>' : '[file]',
    `conversations, JSON Lines${requireFile ? '' : ' (default: the demo conversations)'}`,
  );
  for (const [flag, help] of Object.entries<string>(flags)) program.option(flag, help);
  program.parse(process.argv);
  const options = program.opts<Record<string, boolean | undefined>>();
  const camel = (flag: string) => flag.slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  const given = Object.fromEntries(Object.keys(flags).map((flag) => [flag.slice(2), options[camel(flag)] === true]));
  return {
    file: (program.args[0] as string | undefined) ?? DEMO_DATA_FILE,
    flags: given as ScriptArgs<Flag extends `--${infer F}` ? F : never>['flags'],
  };
}
