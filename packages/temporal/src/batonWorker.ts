import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { HandoffWorkflow } from '@baton/handoff';
import {
  bundleWorkflowCode,
  type NativeConnection,
  Worker,
  type WorkerInterceptors,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import { createTurnActivities } from './turnActivities.js';

/** Options of {@link createBatonWorker}. */
export interface BatonWorkerOptions {
  /** A connection to the cluster (`await NativeConnection.connect({ address })`). */
  connection: NativeConnection;
  /** Default `'default'`. */
  namespace?: string;
  /** The task queue sessions are started on (`TemporalSessions({ taskQueue })`). */
  taskQueue: string;
  /** The handoff workflow whose participants, store and memory run the turns (the same on every worker). */
  workflow: HandoffWorkflow;
  /**
   * How long a turn's branch lease lasts without renewal, in ms (default 15,000; renewed every third
   * of it while the turn runs). A worker killed mid-turn leaves its lease to expire; the retry takes it.
   */
  leaseTtlMs?: number;
  /** Turns this worker runs at once, as a real pool caps them (default 8). */
  maxConcurrentTurns?: number;
  /** A bundle made once with {@link bundleBatonWorkflows} (saves each worker the bundling, a few seconds of CPU). */
  workflowBundle?: WorkflowBundleOption;
  /**
   * Temporal worker interceptors (tracing, metrics, logging around each activity or workflow task),
   * passed to `Worker.create` as they are.
   */
  interceptors?: WorkerInterceptors;
}

/**
 * The session workflow's entry file (`workflows.ts` under the `source` condition, else the built `.js`).
 * @example
 * ```ts
 * await Worker.create({ connection, taskQueue: 'desk', workflowsPath: batonWorkflowsPath(), activities: createTurnActivities(desk) });
 * ```
 */
export function batonWorkflowsPath(): string {
  const source = fileURLToPath(new URL('./workflows.ts', import.meta.url));
  return existsSync(source) ? source : fileURLToPath(new URL('./workflows.js', import.meta.url));
}

/**
 * Bundles the session workflow's code once, for several workers (`createBatonWorker({ workflowBundle })`).
 * @example
 * ```ts
 * const bundle = await bundleBatonWorkflows();
 * await writeFile('baton-workflows.js', bundle.code); // a worker process: { workflowBundle: { codePath: 'baton-workflows.js' } }
 * ```
 */
export function bundleBatonWorkflows(): Promise<{ code: string }> {
  return bundleWorkflowCode({ workflowsPath: batonWorkflowsPath(), logger: quietBundlerLogger });
}

/**
 * A Temporal worker that runs Baton session workflows and their turn activities for `workflow`
 * (see `createTurnActivities`). Run as many as the load needs, on any machines that reach the
 * cluster and the store: a turn runs on one of them, and a worker that dies mid-turn is replaced
 * by another once its heartbeat stops (the turn is finished by the recovery rules, not redone).
 *
 * @returns the worker; `await worker.run()` serves until `worker.shutdown()`
 * @example
 * ```ts
 * const connection = await NativeConnection.connect({ address: '127.0.0.1:7233' });
 * const worker = await createBatonWorker({ connection, taskQueue: 'desk', workflow: desk });
 * await worker.run();
 * ```
 */
export function createBatonWorker(options: BatonWorkerOptions): Promise<Worker> {
  const turns = options.maxConcurrentTurns ?? 8;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities: createTurnActivities(
      options.workflow,
      options.leaseTtlMs === undefined ? {} : { leaseTtlMs: options.leaseTtlMs },
    ),
    maxConcurrentActivityTaskExecutions: turns,
    ...(options.interceptors === undefined ? {} : { interceptors: options.interceptors }),
    ...(options.workflowBundle === undefined
      ? { workflowsPath: batonWorkflowsPath() }
      : { workflowBundle: options.workflowBundle }),
  });
}

/** The bundler's own progress lines are noise in a test run or a server log; warnings and errors still show. */
const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string, meta?: Record<string, unknown>) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: Record<string, unknown>) => console.error(message, meta ?? ''),
};
