/**
 * The Temporal campaign's server: `temporal server start-dev` (the CLI cached by
 * test/support/temporalBinary.ts) on free 127.0.0.1 ports with its SQLite database in a temp dir,
 * which the campaign SIGKILLs and starts again on the same ports and database (a crashed cluster node).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort } from '../support/mongoServer.js';
import { ensureTemporalBinary } from '../support/temporalBinary.js';

/** A running dev server of the campaign. */
export interface TemporalDevServer {
  /** `127.0.0.1:<port>`: the frontend's gRPC address. */
  readonly address: string;
  /** SIGKILLs the server and starts it again on the same ports and database; waits until it serves. Calls are serialised. */
  bounce(): Promise<void>;
  /** How many times it was killed and restarted. */
  readonly bounces: number;
  /** Stops it and removes its database. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts the dev server and waits until its `default` namespace answers.
 * @throws {Error} with its last log lines when it does not serve within 90 s
 * @example
 * ```ts
 * const temporal = await startTemporalDevServer();
 * await temporal.bounce(); // kill -9 and restart
 * await temporal.close();
 * ```
 */
export async function startTemporalDevServer(): Promise<TemporalDevServer> {
  const binary = await ensureTemporalBinary();
  const dir = await mkdtemp(join(tmpdir(), 'baton-chaos-temporal-'));
  const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
  const address = `127.0.0.1:${ports[0]}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--headless',
    '--port',
    String(ports[0]),
    '--http-port',
    String(ports[1]),
  ];
  args.push(
    '--metrics-port',
    String(ports[2]),
    '--ui-port',
    String(ports[3]),
    '--db-filename',
    join(dir, 'temporal.db'),
    '--namespace',
    'default',
    '--log-level',
    'error',
  );
  const log: string[] = [];
  let child: ChildProcess | undefined;
  let bounces = 0;
  let queue: Promise<void> = Promise.resolve();

  const start = async () => {
    const started = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    running.add(started);
    const keep = (chunk: Buffer) => log.push(...chunk.toString().split('\n').filter(Boolean).slice(-40));
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    started.once('exit', () => running.delete(started));
    await waitUntilServing(address, started, log);
  };
  const kill = async () => {
    const current = child;
    child = undefined;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGKILL');
    await exited;
  };

  await start();
  return {
    address,
    get bounces() {
      return bounces;
    },
    bounce() {
      queue = queue.then(async () => {
        await kill();
        bounces += 1;
        await start();
      });
      return queue;
    },
    async close() {
      await queue.catch(() => {});
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilServing(address: string, child: ChildProcess, log: string[]): Promise<void> {
  const deadline = Date.now() + 90_000;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`temporal start-dev exited before serving ${address}:\n${log.slice(-20).join('\n')}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
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
    `temporal start-dev did not serve ${address} within 90 s (${String(lastError)}):\n${log.slice(-20).join('\n')}`,
  );
}
