import { Worker } from 'node:worker_threads';
import type { BatonEvent } from '@baton/core';
import * as core from '@baton/core';
import type { DeskStoreOptions } from '@baton/example-support-desk/desk/deskStore.js';
import { type CrossValidationScheme, foldOf } from './folds.js';
import type { ConversationOutcome } from './replayConversation.js';
import type { ReplayPart, ReplayPartOptions } from './runReplay.js';

/**
 * A replay worker thread stopped without its part of the report: it crashed, exited, or could not load.
 * Its code is `REMOTE_EXECUTOR` (the work ran outside this thread); the worker's own error is its `cause`.
 */
export class ReplayWorkerError extends core.BatonError {
  readonly code = core.BatonErrorCode.REMOTE_EXECUTOR;
}

/** What the parent sends a worker (as `workerData`): plain data only. */
export interface ReplayWorkerData {
  conversations: ReplayPartOptions['conversations'];
  training: ReplayPartOptions['training'];
  /** The run's cross-validation partition (each worker trains and replays by it); `undefined` when held out. */
  scheme: CrossValidationScheme | undefined;
  store: DeskStoreOptions;
  restartEvery: number;
  rejectRefunds: boolean;
  concurrency: number;
  /** Post every event back (only when the caller listens: events are many). */
  events: boolean;
}

/** What a worker posts to the parent. */
export type ReplayWorkerMessage =
  | { type: 'event'; event: BatonEvent }
  | { type: 'outcome'; index: number; outcome: ConversationOutcome }
  | { type: 'done'; part: ReplayPart }
  | { type: 'failed'; error: { name: string; message: string; stack?: string } };

/**
 * Which conversations each worker replays: with a cross-validation `scheme`, the indices sorted by their fold
 * (stable; in input order within a fold), otherwise in input order; cut into `workers` runs of consecutive indices
 * as even as can be. A worker then trains only the folds of its run (one fold split between two workers is trained by both).
 *
 * @param ids the conversations' ids, in input order
 * @param scheme the folds to sort by (`undefined`: held out, nothing trained per fold, input order)
 * @returns one array of input indices per worker (none empty when `workers` ≤ `ids.length`)
 * @throws {InvalidInputError} when `scheme` has folds or a seed out of range (see `checkCrossValidation`)
 * @example
 * ```ts
 * shareOut(['a', 'b', 'c'], 2, { folds: 5 }); // e.g. [[2, 0], [1]]: sorted by fold, cut in two
 * ```
 */
export function shareOut(
  ids: readonly string[],
  workers: number,
  scheme: CrossValidationScheme | undefined,
): number[][] {
  const order = ids.map((_, index) => index);
  if (scheme !== undefined) {
    const folds = ids.map((id) => foldOf(id, scheme.folds, scheme.seed));
    order.sort((a, b) => folds[a]! - folds[b]! || a - b);
  }
  const shares: number[][] = [];
  for (let w = 0; w < workers; w += 1)
    shares.push(order.slice(Math.floor((w * order.length) / workers), Math.floor(((w + 1) * order.length) / workers)));
  return shares;
}

/** The condition under which the workspace packages (`@baton/*`) resolve to their TypeScript sources. */
const SOURCE_CONDITION = '--conditions=source';

/**
 * Starts one replay worker on its bootstrap, `replayWorker.mjs`, which registers tsx in the new thread and
 * imports the TypeScript entry, `replayWorkerMain.ts`. The worker gets this thread's Node flags (under the
 * CLI: tsx's own and `--conditions=source`; tsx's hooks are then registered twice in the worker, which
 * changes nothing) and `--conditions=source` when they lack it (a host such as vitest resolves the sources
 * its own way, which a worker does not inherit). Errors of loading surface as the worker's `error` event.
 */
function startWorker(workerData: ReplayWorkerData): Worker {
  const execArgv = process.execArgv.includes(SOURCE_CONDITION)
    ? process.execArgv
    : [...process.execArgv, SOURCE_CONDITION];
  return new Worker(new URL('./replayWorker.mjs', import.meta.url), { workerData, execArgv });
}

/** Rebuilds a worker's error: a Baton error by its class name (so the CLI prints it as such), else an `Error` of that name. */
function reviveError(error: { name: string; message: string; stack?: string }): Error {
  const Named = (core as Record<string, unknown>)[error.name];
  const revived =
    typeof Named === 'function' && Named.prototype instanceof core.BatonError
      ? new (Named as new (message: string) => Error)(error.message)
      : Object.assign(new Error(error.message), { name: error.name });
  if (error.stack !== undefined) revived.stack = error.stack;
  return revived;
}

/**
 * Replays `options.conversations` on `workers` worker threads (see {@link shareOut}) and merges their
 * parts in input order. `onConversation` and `onEvent` are called in this thread as the workers' messages
 * arrive. When a worker fails, the others are asked to stop (each finishes its conversations in flight),
 * and the first error is thrown once all have stopped.
 *
 * @returns the merged part: outcomes and token reports in input order, summed counts, every training's time
 * @throws {ReplayWorkerError} when a worker exits without its part; the error a worker's replay threw (revived by name)
 */
export async function replayInWorkers(options: ReplayPartOptions, workers: number): Promise<ReplayPart> {
  const { conversations } = options;
  const shares = shareOut(
    conversations.map((c) => c.id),
    workers,
    options.scheme,
  ).filter((share) => share.length > 0);
  const outcomes: ConversationOutcome[] = new Array(conversations.length);
  const costs: ReplayPart['costs'] = new Array(conversations.length);
  const merged: ReplayPart = { outcomes, costs, messages: 0, episodes: 0, trainingMs: [] };
  let done = 0;
  const threads: Worker[] = [];
  let firstError: unknown;
  const stopAll = (error: unknown) => {
    if (firstError === undefined) firstError = error;
    for (const thread of threads) thread.postMessage({ type: 'stop' });
  };

  const runShare = (share: number[], number: number) =>
    new Promise<void>((resolve) => {
      const thread = startWorker({
        conversations: share.map((index) => conversations[index]!),
        training: options.training,
        scheme: options.scheme,
        store: options.deskStore.options,
        restartEvery: options.restartEvery ?? 0,
        rejectRefunds: options.rejectRefunds ?? false,
        concurrency: options.concurrency,
        events: options.onEvent !== undefined,
      });
      threads.push(thread);
      let finished = false;
      thread.on('message', (message: ReplayWorkerMessage) => {
        if (message.type === 'event') options.onEvent?.(message.event);
        else if (message.type === 'outcome') {
          done += 1;
          options.onConversation?.(message.outcome, done, conversations.length);
        } else if (message.type === 'done') {
          finished = true;
          const { part } = message;
          share.forEach((index, i) => {
            outcomes[index] = part.outcomes[i]!;
            costs[index] = part.costs[i]!;
          });
          merged.messages += part.messages;
          merged.episodes += part.episodes;
          merged.trainingMs.push(...part.trainingMs);
        } else if (message.type === 'failed') {
          finished = true;
          stopAll(reviveError(message.error));
        }
      });
      thread.on('error', (error) => {
        finished = true;
        stopAll(
          new ReplayWorkerError(`Replay worker ${number} of ${shares.length} crashed: ${error.message}`, {
            cause: error,
          }),
        );
      });
      thread.on('exit', (code) => {
        if (!finished)
          stopAll(
            new ReplayWorkerError(
              `Replay worker ${number} of ${shares.length} exited with code ${code} before it reported.`,
            ),
          );
        resolve();
      });
    });

  await Promise.all(shares.map((share, i) => runShare(share, i + 1)));
  if (firstError !== undefined) throw firstError;
  return merged;
}
