/**
 * A throwaway PostgreSQL server for benches that run FerretDB on its PostgreSQL backend: `initdb`
 * in a temp dir, started with `pg_ctl` on a free 127.0.0.1 port (its socket in the same dir), trust
 * authentication for the superuser `postgres`. PostgreSQL refuses to run as root, so as root the
 * cluster belongs to the `postgres` user when there is one, else to `nobody` (through `runuser`).
 * Not used by the tests: CI does not need PostgreSQL.
 *
 * @example
 * ```ts
 * const pg = await startPostgres();
 * const mongo = await startMongoServer({ postgresqlUrl: pg.url });
 * // …
 * await mongo.close();
 * await pg.close(); // stops it and removes its data
 * ```
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './mongoServer.js';

const run = promisify(execFile);

/** A running PostgreSQL cluster. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** `PostgreSQL 15.x` as `postgres --version` says it. */
  readonly version: string;
  /** The OS user the server runs as. */
  readonly osUser: string;
  /** The postmaster's process id (every connection is a child process of it). */
  readonly pid: number;
  /** Stops it (`pg_ctl stop -m fast`) and removes its data. */
  close(): Promise<void>;
}

/**
 * Where PostgreSQL's server programs are: `$PG_BIN`, else the newest `/usr/lib/postgresql/<n>/bin`
 * (Debian's layout); `undefined` when neither has `initdb`.
 */
export function postgresBinDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/** Whether an OS user exists (`id -u <name>` succeeds). */
function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /** Extra `-c name=value` server settings, e.g. `{ max_connections: '200' }`. */
  settings?: Record<string, string>;
}

const started = new Set<{ pgCtl: string[]; dataDir: string }>();
process.once('exit', () => {
  for (const server of started) {
    try {
      execFileSync(server.pgCtl[0]!, [...server.pgCtl.slice(1), 'stop', '-D', server.dataDir, '-m', 'immediate'], {
        stdio: 'ignore',
      });
    } catch {
      // Already gone.
    }
  }
});

/**
 * Creates a cluster in a temp dir and starts it; waits until it accepts connections.
 * @throws {Error} when the binaries are missing (set PG_BIN) or the server does not start, with its log
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (bin === undefined)
    throw new Error(
      'PostgreSQL server binaries not found: install PostgreSQL (Debian: postgresql) or set PG_BIN to the folder with initdb and pg_ctl.',
    );
  const root = process.getuid?.() === 0;
  const osUser = root ? (userExists('postgres') ? 'postgres' : 'nobody') : (process.env.USER ?? 'current user');
  const as = (program: string): string[] =>
    root ? ['runuser', '-u', osUser, '--', join(bin, program)] : [join(bin, program)];
  const dir = await mkdtemp(join(tmpdir(), 'baton-postgres-'));
  const dataDir = join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', osUser]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', osUser]).toString().trim());
    await chown(dir, uid, gid);
  }
  const exec = (argv: string[]) => run(argv[0]!, argv.slice(1), { cwd: dir, timeout: 120_000 });
  const port = await freePort();
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: dir, ...options.settings };
  const serverOptions = [`-p ${port}`, ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`)].join(
    ' ',
  );
  const pgCtl = as('pg_ctl');
  const handle = { pgCtl, dataDir };
  try {
    await exec([...as('initdb'), '-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
    started.add(handle);
    await exec([
      ...pgCtl,
      'start',
      '-D',
      dataDir,
      '-w',
      '-t',
      '60',
      '-l',
      join(dir, 'server.log'),
      '-o',
      serverOptions,
    ]);
  } catch (error) {
    const log = await run('tail', ['-n', '20', join(dir, 'server.log')]).then(
      (r) => r.stdout,
      () => '',
    );
    await stop(handle);
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start in ${dataDir}: ${(error as Error).message}\n${log}`);
  }
  const version = (await run(join(bin, 'postgres'), ['--version'])).stdout
    .trim()
    .replace(/^postgres \(PostgreSQL\) /, 'PostgreSQL ');
  const pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    version,
    osUser,
    pid,
    close: async () => {
      await stop(handle);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function stop(handle: { pgCtl: string[]; dataDir: string }): Promise<void> {
  if (!started.delete(handle)) return;
  await run(handle.pgCtl[0]!, [...handle.pgCtl.slice(1), 'stop', '-D', handle.dataDir, '-m', 'fast', '-w']).catch(
    () => {},
  );
}
