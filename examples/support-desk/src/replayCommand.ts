import cliProgress from 'cli-progress';
import { type AbcdConversation, loadConversations } from './abcdData.js';
import type { DeskModels } from './deskAgents.js';
import { createOpenAIModels } from './deskModels.js';
import { chooseDeskStore } from './deskStore.js';
import { loadOntology } from './ontology.js';
import { formatReplayReport, type ReplayReport } from './replayReport.js';
import { runReplay } from './runReplay.js';
import { specialistForFlow } from './specialists.js';

/** Options of the `replay` command (see `cli.ts`). */
export interface ReplayCommandOptions {
  data: string;
  limit?: number;
  restartEvery: number;
  storeDir?: string;
  json: boolean;
  rejectRefunds: boolean;
  models: 'offline' | 'openai';
  progress: boolean;
}

/**
 * The `replay` command: loads the conversations, replays them with a progress bar on stderr, and
 * prints the report (text, or JSON with `json`).
 *
 * @param options what `cli.ts` parsed: `{ data, limit?, restartEvery, storeDir?, json, rejectRefunds, models, progress }`
 * @returns the report
 * @throws {NotFoundError} when the data file is missing (the message says where the data comes from)
 * @throws {InvalidInputError} when a line of the data file is not an ABCD conversation
 * @throws {ConfigurationError} when `storeDir` holds files a FileStore does not write (it is not cleared), or
 *   for `models: 'openai'` without an API key
 * @example
 * ```ts
 * await replayCommand({ data: DEFAULT_DATA_FILE, limit: 20, restartEvery: 0, json: false, rejectRefunds: false, models: 'offline', progress: false });
 * ```
 */
export async function replayCommand(options: ReplayCommandOptions): Promise<ReplayReport> {
  const all = await loadConversations(options.data);
  const conversations: AbcdConversation[] = options.limit === undefined ? all : all.slice(0, options.limit);
  const deskStore = chooseDeskStore({ ...(options.storeDir === undefined ? {} : { directory: options.storeDir }), mongoUrl: process.env.MONGODB_URL });
  const models: DeskModels | undefined = options.models === 'openai' ? await createOpenAIModels() : undefined;
  const bar = options.progress
    ? new cliProgress.SingleBar(
        { format: 'Replaying {bar} {value}/{total} conversations | routed right {right}% | {duration}s', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let right = 0;
  bar?.start(conversations.length, 0, { right: '0.0' });
  try {
    const report = await runReplay({
      conversations,
      training: all,
      ontology: loadOntology(),
      deskStore,
      restartEvery: options.restartEvery,
      rejectRefunds: options.rejectRefunds,
      ...(models === undefined ? {} : { models }),
      onConversation: (outcome, done) => {
        if (outcome.routedTo !== null && outcome.routedTo === specialistForFlow(outcome.flow)) right += 1;
        bar?.update(done, { right: ((100 * right) / done).toFixed(1) });
      },
    });
    bar?.stop();
    const { conversations: _each, ...summary } = report;
    console.log(options.json ? JSON.stringify(summary, null, 2) : formatReplayReport(report));
    return report;
  } finally {
    bar?.stop();
  }
}
