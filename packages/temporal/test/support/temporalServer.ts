/**
 * A real Temporal server for tests: `temporal server start-dev --ip 127.0.0.1 --headless` of the
 * Temporal CLI v1.5.1 (built once per machine by test/support/temporalBinary.ts), on free ports, with
 * its SQLite database in a temp file. It can be stopped and restarted on the same port with the same
 * database (workflows, timers and activities survive, as on a real cluster).
 *
 * @example
 * ```ts
 * const server = await startTemporalServer();
 * const connection = await Connection.connect({ address: server.address });
 * // …
 * await server.close(); // stops it and removes its database
 * ```
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort } from '../../../../test/support/mongoServer.js';
import { ensureTemporalBinary } from '../../../../test/support/temporalBinary.js';

/** A running (or stopped) dev server. */
export interface TemporalServer {
  /** `127.0.0.1:<port>`, the frontend's gRPC address. */
  readonly address: string;
  /** The namespace the server was started with (`default`). */
  readonly namespace: string;
  /** The server process's id while it runs (a bench samples its CPU), else `undefined`. */
  readonly pid: number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s); the database stays. */
  stop(): Promise<void>;
  /** Starts it again on the same ports with the same database and waits until it answers. */
  restart(): Promise<void>;
  /** Stops it and removes its database. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Builds the CLI if needed (announced on stderr), starts `start-dev` and waits until its namespace answers.
 * @throws {Error} with the server's last log lines when it does not start within `readyTimeoutMs` (default 90 s)
 */
export async function startTemporalServer(
  options: {
    readyTimeoutMs?: number;
    /** More `start-dev` flags, e.g. `['--sqlite-pragma', 'synchronous=OFF']` or `--dynamic-config-value` ones. */
    args?: readonly string[];
  } = {},
): Promise<TemporalServer> {
  const binary = await ensureTemporalBinary();
  const dir = await mkdtemp(join(tmpdir(), 'baton-temporal-'));
  const [port, httpPort, metricsPort, uiPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const address = `127.0.0.1:${port}`;
  const namespace = 'default';
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--headless',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    join(dir, 'temporal.db'),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;
  const log: string[] = [];

  const start = async (): Promise<void> => {
    const started = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    running.add(started);
    const keep = (chunk: Buffer) => {
      log.push(...chunk.toString().split('\n').filter(Boolean));
      log.splice(0, Math.max(0, log.length - 40));
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    started.once('exit', () => running.delete(started));
    await waitUntilServing(address, namespace, started, options.readyTimeoutMs ?? 90_000, log);
  };

  const stop = async (): Promise<void> => {
    const current = child;
    child = undefined;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill('SIGTERM');
    const timer = setTimeout(() => current.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await start();
  } catch (error) {
    await stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    address,
    namespace,
    get pid() {
      return child?.pid;
    },
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilServing(
  address: string,
  namespace: string,
  child: ChildProcess,
  timeoutMs: number,
  log: string[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `temporal start-dev exited (code ${child.exitCode}, signal ${child.signalCode}) before serving ${address}. Its log:\n${log.join('\n')}`,
      );
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(
    `temporal start-dev did not serve ${address} within ${timeoutMs} ms (${String(lastError)}). Its log:\n${log.join('\n')}`,
  );
}
