import { resolve } from 'node:path';
import { isBatonError } from '@baton/core';
import { Command, Option } from 'commander';
import { chatCommand } from './chat/chatCommand.js';
import { mcpCommand } from './chat/mcpCommand.js';

// The desk's command line: `pnpm chat`, `pnpm --filter @baton/example-support-desk mcp` (the replay and its report are research/desk-eval's `pnpm start`).

/**
 * A path given on the command line, made absolute against the folder the user ran the command in:
 * `pnpm chat` runs this script in the package's folder and passes the caller's folder as `INIT_CWD`.
 */
const callerPath = (value: string) => resolve(process.env.INIT_CWD ?? process.cwd(), value);

const modelsOption = () =>
  new Option(
    '--models <kind>',
    'offline (learned from the data) or openai (OPENAI_API_KEY, OPENAI_MODEL, OPENAI_BASE_URL)',
  )
    .choices(['offline', 'openai'])
    .default(
      process.env.OPENAI_API_KEY ? 'openai' : 'offline',
      process.env.OPENAI_API_KEY ? 'openai, as OPENAI_API_KEY is set' : 'offline, as OPENAI_API_KEY is unset',
    );

const program = new Command()
  .name('support-desk')
  .description("Baton's support desk: a triage coordinator and six specialists with ABCD's console actions as tools.")
  .addHelpText(
    'after',
    `
Data: --data FILE; else BATON_ABCD (a file, or a folder holding abcd-dev-400.jsonl or one *.jsonl); else the demo
conversations shipped with the example (examples/support-desk/conversations/demo.jsonl).`,
  );

program
  .command('chat')
  .description('Chat with the desk in the terminal.')
  .option(
    '--data <file>',
    'conversations the offline models learn from (default: BATON_ABCD, else the demo conversations)',
    callerPath,
  )
  .option('--store-dir <dir>', 'folder of the FileStore (MONGODB_URL wins)', callerPath)
  .option('--session <id>', 'resume or start this session id')
  .option('--user <id>', 'the user id (episodes are recalled per user)', 'chat-user')
  .addOption(modelsOption())
  .action(async (options) => {
    await chatCommand({
      ...(options.data === undefined ? {} : { data: options.data }),
      models: options.models,
      user: options.user,
      ...(options.storeDir === undefined ? {} : { storeDir: options.storeDir }),
      ...(options.session === undefined ? {} : { session: options.session }),
    });
  });

program
  .command('mcp')
  .description('Serve the desk as an MCP server on stdin/stdout (tools support-desk and support-desk_respond).')
  .option(
    '--data <file>',
    'conversations the offline models learn from (default: BATON_ABCD, else the demo conversations)',
    callerPath,
  )
  .option(
    '--store-dir <dir>',
    'folder of the FileStore (default examples/support-desk/.data/mcp; MONGODB_URL wins)',
    callerPath,
  )
  .option('--session <id>', 'the Baton session of this MCP conversation: give one to continue it (default: a new one)')
  .addOption(modelsOption())
  .action(async (options) => {
    await mcpCommand({
      ...(options.data === undefined ? {} : { data: options.data }),
      models: options.models,
      ...(options.storeDir === undefined ? {} : { storeDir: options.storeDir }),
      ...(options.session === undefined ? {} : { session: options.session }),
    });
  });

// `pnpm chat -- --help` passes the `--` on: drop it when it comes right after the command's name.
const argv = process.argv.slice();
if (argv[3] === '--') argv.splice(3, 1);
else if (argv[2] === '--') argv.splice(2, 1);

try {
  await program.parseAsync(argv);
} catch (error) {
  if (isBatonError(error)) {
    console.error(`${error.name}: ${error.message}`);
    process.exitCode = 1;
  } else throw error;
}
