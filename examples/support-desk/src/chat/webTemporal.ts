import type { Store } from '@baton/core';
import type { HandoffWorkflow, SessionRunner } from '@baton/handoff';
import { createBatonWorker, TemporalSessions, temporalRunner } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';

/** The task queue the web chat's sessions run on when none is given. */
export const DEFAULT_DESK_TASK_QUEUE = 'support-desk';

/** Where the web chat's turns run when they run on Temporal (`web --temporal`). */
export interface WebTemporalOptions {
  /** The Temporal frontend's address, e.g. `127.0.0.1:7233` (`temporal server start-dev`'s). */
  address: string;
  /** Default `'default'`. */
  namespace?: string;
  /** The task queue of the desk's workers (default {@link DEFAULT_DESK_TASK_QUEUE}). */
  taskQueue?: string;
  /** Run a worker in the web server's process too (default true); `false`: only workers started apart (`web:worker`) run turns. */
  worker?: boolean;
}

/** The web chat's link to Temporal: the runner `createBatonApp` takes, and what closes it. */
export interface WebTemporal {
  runner: SessionRunner;
  close(): Promise<void>;
}

/**
 * Connects the web chat to Temporal: a client whose session workflows run the desk's turns as
 * Updates (`temporalRunner`), and, unless `worker` is false, a Baton worker in this process on the
 * same `workflow` and `store` (other workers, `web:worker`, may poll the same task queue: they must
 * reach the same store, a MongoDB database or a FileStore folder).
 *
 * @throws the connection's error when no Temporal server answers at `address`
 * @example
 * ```ts
 * const temporal = await connectWebTemporal(desk, store, { address: '127.0.0.1:7233' });
 * const app = createBatonApp({ workflow: desk, runner: temporal.runner });
 * ```
 */
export async function connectWebTemporal(
  workflow: HandoffWorkflow,
  store: Store,
  options: WebTemporalOptions,
): Promise<WebTemporal> {
  const namespace = options.namespace ?? 'default';
  const taskQueue = options.taskQueue ?? DEFAULT_DESK_TASK_QUEUE;
  const connection = await Connection.connect({ address: options.address });
  const sessions = new TemporalSessions({ client: new Client({ connection, namespace }), taskQueue, store });
  let worker: { worker: Worker; connection: NativeConnection; running: Promise<void> } | undefined;
  if (options.worker !== false) {
    worker = await startDeskWorker(workflow, { ...options, namespace, taskQueue });
  }
  return {
    runner: temporalRunner(sessions),
    close: async () => {
      if (worker !== undefined) {
        worker.worker.shutdown();
        await worker.running;
        await worker.connection.close();
      }
      await connection.close();
    },
  };
}

/**
 * Starts a Baton worker that runs the desk's session workflows and turns (`worker.run()` already
 * called: `running` settles when it stops after `worker.shutdown()`).
 * @example
 * ```ts
 * const { worker, running } = await startDeskWorker(desk, { address: '127.0.0.1:7233' });
 * ```
 */
export async function startDeskWorker(
  workflow: HandoffWorkflow,
  options: WebTemporalOptions,
): Promise<{ worker: Worker; connection: NativeConnection; running: Promise<void> }> {
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await createBatonWorker({
    connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? DEFAULT_DESK_TASK_QUEUE,
    workflow,
  });
  return { worker, connection, running: worker.run() };
}

/**
 * Keeps the Temporal SDK's own lines (worker state changes) out of the desk's console; warnings and
 * errors still show. Call it once, first, in a process's entry point (the runtime is process-wide).
 * @example
 * ```ts
 * quietTemporalLogs();
 * ```
 */
export function quietTemporalLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already: its logger stays.
  }
}
