import { Command, Option } from 'commander';
import { startWebDesk } from './webDesk.js';

/**
 * `pnpm --filter @baton/example-support-desk web`: serves the support desk as a web chat, and over
 * AG-UI (`/ag-ui`), MCP (`/mcp`) and A2A (`/a2a/`) on the same port (see `startWebDesk`). Options:
 * `--port` (default 8787), `--host`, `--store-dir`, `--models offline|openai`, `--data FILE`, `--pace MS`, `--no-build`.
 */
const program = new Command('web')
  .description('Serve the support desk as a web chat (customer view and supervisor approvals).')
  .option('--port <port>', 'port to listen on', '8787')
  .option('--host <host>', 'host to listen on', '127.0.0.1')
  .option('--store-dir <dir>', 'FileStore folder (default examples/support-desk/.data/web)')
  .addOption(
    new Option('--models <kind>', 'offline models or OpenAI')
      .choices(['offline', 'openai'])
      .default(process.env.OPENAI_API_KEY ? 'openai' : 'offline'),
  )
  .option('--data <file>', 'conversations the offline models learn from')
  .option('--pace <ms>', 'ms between streamed words of the offline models', '20')
  .option('--no-build', 'serve the existing front-end build instead of building it');
program.parse();
const options = program.opts<{
  port: string;
  host: string;
  storeDir?: string;
  models: 'offline' | 'openai';
  data?: string;
  pace: string;
  build: boolean;
}>();

const desk = await startWebDesk({
  port: Number(options.port),
  hostname: options.host,
  models: options.models,
  paceMs: Number(options.pace),
  build: options.build,
  ...(options.storeDir === undefined ? {} : { storeDir: options.storeDir }),
  ...(options.data === undefined ? {} : { data: options.data }),
});
console.log(
  `Support desk web chat on ${desk.url} (sessions in ${desk.storeLocation}, models ${options.models}). Ctrl-C stops it.\n` +
    `Also served: AG-UI ${desk.url}/ag-ui, MCP ${desk.url}/mcp, A2A ${desk.url}/a2a/ (card at /a2a/.well-known/agent-card.json).`,
);
const stop = () => void desk.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
