import { Command, Option } from 'commander';
import { startWebDesk } from './webDesk.js';

/**
 * `pnpm --filter @baton/example-support-desk web`: serves the support desk as a web chat, and over
 * AG-UI (`/ag-ui`), MCP (`/mcp`) and A2A (`/a2a/`) on the same port (see `startWebDesk`). Options:
 * `--port` (default 8787), `--host`, `--store-dir`, `--models offline|openai`, `--data FILE`, `--pace MS`, `--no-build`,
 * and `--temporal [ADDRESS]` (`--task-queue`, `--no-worker`): the turns run on Temporal workers (a worker in
 * this process unless `--no-worker`; more with `web:worker`).
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
  .option('--no-build', 'serve the existing front-end build instead of building it')
  .option(
    '--temporal [address]',
    'run turns on Temporal workers (default address TEMPORAL_ADDRESS, else 127.0.0.1:7233); a worker runs here too',
  )
  .option('--task-queue <name>', 'the Temporal task queue of the desk workers', 'support-desk')
  .option('--no-worker', 'with --temporal: run no worker here (start them with `web:worker`)');
program.parse();
const options = program.opts<{
  port: string;
  host: string;
  storeDir?: string;
  models: 'offline' | 'openai';
  data?: string;
  pace: string;
  build: boolean;
  temporal?: string | true;
  taskQueue: string;
  worker: boolean;
}>();
const temporalAddress =
  options.temporal === undefined
    ? undefined
    : options.temporal === true
      ? (process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233')
      : options.temporal;

if (temporalAddress !== undefined) (await import('./webTemporal.js')).quietTemporalLogs();
const desk = await startWebDesk({
  port: Number(options.port),
  hostname: options.host,
  models: options.models,
  paceMs: Number(options.pace),
  build: options.build,
  ...(options.storeDir === undefined ? {} : { storeDir: options.storeDir }),
  ...(options.data === undefined ? {} : { data: options.data }),
  ...(temporalAddress === undefined
    ? {}
    : { temporal: { address: temporalAddress, taskQueue: options.taskQueue, worker: options.worker } }),
});
const runs =
  temporalAddress === undefined ? '' : `, turns on Temporal ${temporalAddress} task queue ${options.taskQueue}`;
console.log(
  `Support desk web chat on ${desk.url} (sessions in ${desk.storeLocation}, models ${options.models}${runs}). Ctrl-C stops it.\n` +
    `Also served: AG-UI ${desk.url}/ag-ui, MCP ${desk.url}/mcp, A2A ${desk.url}/a2a/ (card at /a2a/.well-known/agent-card.json).`,
);
const stop = () => void desk.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
