/**
 * The campaign's private FerretDB (the same binary and flags as test/support/mongoServer.ts), which
 * the campaign can SIGKILL and start again on the same port and data while children use it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { ensureFerretdbBinary } from '../support/ferretdbBinary.js';
import { freePort } from '../support/mongoServer.js';

/** A FerretDB the campaign owns. */
export interface FerretServer {
  readonly url: string;
  /** SIGKILLs the server and starts it again on the same port and data; waits for a ping. Calls are serialised. */
  bounce(): Promise<void>;
  /** Runs `work` while no restart is under way (queued with the restarts). */
  whileUp<T>(work: () => Promise<T>): Promise<T>;
  /** How many times it was killed and restarted. */
  readonly bounces: number;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/**
 * Starts a private FerretDB on a free 127.0.0.1 port with its data in a temp dir.
 * @throws {Error} with its last log lines when it does not answer a ping within 30 s
 * @example
 * ```ts
 * const ferret = await startFerretServer();
 * await ferret.bounce(); // kill -9 and restart
 * await ferret.close();
 * ```
 */
export async function startFerretServer(): Promise<FerretServer> {
  const binary = await ensureFerretdbBinary();
  const stateDir = await mkdtemp(join(tmpdir(), 'baton-chaos-ferretdb-'));
  const port = await freePort();
  const url = `mongodb://127.0.0.1:${port}/`;
  const args = [
    '--handler=sqlite',
    '--telemetry=disable',
    `--listen-addr=127.0.0.1:${port}`,
    `--state-dir=${stateDir}`,
    `--sqlite-url=file:${stateDir}/`,
    '--debug-addr=-',
    '--log-level=warn',
  ];
  let child: ChildProcess | undefined;
  let bounces = 0;
  let closed = false;
  let queue: Promise<void> = Promise.resolve();
  const log: string[] = [];

  const start = async () => {
    const started = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    const keep = (chunk: Buffer) => {
      log.push(...chunk.toString().split('\n').filter(Boolean));
      log.splice(0, Math.max(0, log.length - 40));
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    await waitForPing(url, started, log);
  };
  const kill9 = async () => {
    const current = child;
    child = undefined;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill('SIGKILL');
    await exited;
  };
  const onExit = () => child?.kill('SIGKILL');
  process.once('exit', onExit);
  await start();
  return {
    url,
    get bounces() {
      return bounces;
    },
    bounce() {
      queue = queue.then(async () => {
        if (closed) return; // a trial still running when the campaign was stopped: no server to start again
        await kill9();
        bounces += 1;
        await start();
      });
      return queue;
    },
    whileUp<T>(work: () => Promise<T>): Promise<T> {
      const result = queue.then(work);
      queue = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
    async close() {
      closed = true;
      await queue.catch(() => {});
      await kill9();
      process.removeListener('exit', onExit);
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

async function waitForPing(url: string, child: ChildProcess, log: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`FerretDB exited before answering a ping on ${url}:\n${log.join('\n')}`);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
    try {
      await client.db('admin').command({ ping: 1 });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.close().catch(() => {});
    }
  }
  throw new Error(`FerretDB did not answer a ping on ${url} within 30 s:\n${log.join('\n')}`);
}
