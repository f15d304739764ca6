/**
 * A real MongoDB-compatible server for tests: FerretDB v1.24.2 with its embedded SQLite backend
 * (or, with `postgresqlUrl`, its PostgreSQL backend), on a free 127.0.0.1 port, with its data in a temp dir. It can be stopped and restarted on the
 * same port with the same data (for connection-loss tests).
 *
 * @example
 * ```ts
 * const server = await startMongoServer();
 * const client = new MongoClient(server.url);
 * // …
 * await server.close(); // stops it and removes its data
 * ```
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { ensureFerretdbBinary } from './ferretdbBinary.js';

/** A running (or stopped) test server. */
export interface MongoServer {
  /** `mongodb://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly port: number;
  /** FerretDB's state dir (and its SQLite files on the SQLite backend). */
  readonly stateDir: string;
  /** FerretDB's process id while it runs. */
  readonly pid: number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data and waits until it answers a ping. */
  restart(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/** Options of {@link startMongoServer}. */
export interface StartMongoServerOptions {
  /** Overrides `$BATON_CACHE_DIR` for the binary. */
  cacheDir?: string;
  /** How long to wait for the first ping, in ms. Default 30,000. */
  readyTimeoutMs?: number;
  /**
   * Runs FerretDB on its PostgreSQL backend with this URL (`postgres://user@host:port/db`, e.g. from
   * `startPostgres()` in postgresServer.ts) instead of its embedded SQLite backend.
   */
  postgresqlUrl?: string;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Builds FerretDB if needed (with Go ≥ 1.24, about two minutes, once per cache dir; the build says so
 * on stderr when it starts and when it ends), starts it and waits until it answers a ping.
 * @throws {Error} with FerretDB's last log lines when it does not start
 */
export async function startMongoServer(options: StartMongoServerOptions = {}): Promise<MongoServer> {
  const binary = await ensureFerretdbBinary(options.cacheDir);
  const stateDir = await mkdtemp(join(tmpdir(), 'baton-ferretdb-'));
  const port = await freePort();
  const url = `mongodb://127.0.0.1:${port}/`;
  const backend =
    options.postgresqlUrl === undefined
      ? ['--handler=sqlite', `--sqlite-url=file:${stateDir}/`]
      : ['--handler=pg', `--postgresql-url=${options.postgresqlUrl}`];
  const args = [
    ...backend,
    '--telemetry=disable',
    `--listen-addr=127.0.0.1:${port}`,
    `--state-dir=${stateDir}`,
    '--debug-addr=-',
    '--log-level=warn',
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
    await waitForPing(url, started, options.readyTimeoutMs ?? 30_000, log);
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
    await rm(stateDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    port,
    stateDir,
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
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/**
 * A free 127.0.0.1 port for a server that is started, and may be restarted, on a port fixed in its
 * command line. It is picked outside the kernel's ephemeral range (Linux's
 * `/proc/sys/net/ipv4/ip_local_port_range`, usually 32768-60999), from which every `listen(0)` and
 * every outgoing connection of the machine takes its ports: a port from that range is free only at
 * the moment of this call, and while a server on it is stopped for a restart, any connection of a
 * parallel test may take it (the restart then fails to bind). Outside the range only an explicit
 * bind can take it. Falls back to a port the OS hands out when the range cannot be read or no port
 * below it is free.
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = await ephemeralRangeStart();
  if (ephemeralStart !== undefined && ephemeralStart > FIXED_PORTS_FROM + 1000) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const port = FIXED_PORTS_FROM + Math.floor(Math.random() * (ephemeralStart - FIXED_PORTS_FROM));
      if (await canListen(port)) return port;
    }
  }
  return listenOnce(0);
}

/** The lowest port {@link freePort} picks: above the well-known and most registered service ports. */
const FIXED_PORTS_FROM = 20_000;

/** The first port of the kernel's ephemeral range, or `undefined` where it cannot be read (not Linux). */
async function ephemeralRangeStart(): Promise<number | undefined> {
  try {
    const start = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/)[0]);
    return Number.isSafeInteger(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a server can listen on `port` of 127.0.0.1 right now. */
function canListen(port: number): Promise<boolean> {
  return listenOnce(port).then(
    () => true,
    () => false,
  );
}

/** Listens on `port` of 127.0.0.1 (0: any), closes, and resolves to the port it listened on. */
function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

async function waitForPing(url: string, child: ChildProcess, timeoutMs: number, log: string[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `FerretDB exited (code ${child.exitCode}, signal ${child.signalCode}) before answering a ping on ${url}. Its log:\n${log.join('\n')}`,
      );
    }
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
    try {
      await client.db('admin').command({ ping: 1 });
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.close().catch(() => {});
    }
  }
  throw new Error(
    `FerretDB did not answer a ping on ${url} within ${timeoutMs} ms (${String(lastError)}). Its log:\n${log.join('\n')}`,
  );
}

/**
 * A database name of its own for a test file: `baton_<label>_<random>` (FerretDB allows letters,
 * digits, `_` and `-`, at most 63 characters).
 */
export function testDatabaseName(label: string): string {
  const clean = label.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 30);
  return `baton_${clean}_${Math.random().toString(36).slice(2, 10)}`;
}
