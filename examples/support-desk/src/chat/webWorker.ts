import { Command, Option } from 'commander';
import { openDesk } from '../desk/openDesk.js';
import { DEFAULT_WEB_STORE_DIR } from './webDesk.js';
import { DEFAULT_DESK_TASK_QUEUE, quietTemporalLogs, startDeskWorker } from './webTemporal.js';

/**
 * `pnpm --filter @baton/example-support-desk web:worker`: a Temporal worker that runs the web chat's
 * turns (`web --temporal` sends them), in its own process: start as many as you like. It must reach
 * the web server's store: the same `--store-dir` on this machine, or `MONGODB_URL`. Options:
 * `--temporal ADDRESS` (default TEMPORAL_ADDRESS, else 127.0.0.1:7233), `--task-queue`, `--store-dir`,
 * `--models`, `--data`, `--pace`.
 */
const program = new Command('web:worker')
  .description("Run the web chat's turns on Temporal (a worker for `web --temporal`).")
  .option('--temporal <address>', 'the Temporal server', process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233')
  .option('--task-queue <name>', 'the task queue `web --temporal` uses', DEFAULT_DESK_TASK_QUEUE)
  .option('--store-dir <dir>', 'FileStore folder (default examples/support-desk/.data/web); MONGODB_URL wins')
  .addOption(
    new Option('--models <kind>', 'offline models or OpenAI')
      .choices(['offline', 'openai'])
      .default(process.env.OPENAI_API_KEY ? 'openai' : 'offline'),
  )
  .option('--data <file>', 'conversations the offline models learn from')
  .option('--pace <ms>', 'ms between streamed words of the offline models', '20');
program.parse();
const options = program.opts<{
  temporal: string;
  taskQueue: string;
  storeDir?: string;
  models: 'offline' | 'openai';
  data?: string;
  pace: string;
}>();

quietTemporalLogs();
const desk = await openDesk({
  models: options.models,
  paceMs: Number(options.pace),
  storeDir: options.storeDir ?? DEFAULT_WEB_STORE_DIR,
  ...(options.data === undefined ? {} : { data: options.data }),
});
const { workflow } = desk;
const { worker, connection, running } = await startDeskWorker(workflow, {
  address: options.temporal,
  taskQueue: options.taskQueue,
});
console.log(
  `Support desk worker on Temporal ${options.temporal} task queue ${options.taskQueue} (sessions in ${desk.storeLocation}). Ctrl-C stops it.`,
);
const stop = () => worker.shutdown();
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
await running;
await connection.close();
await desk.close();
