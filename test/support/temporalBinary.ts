/**
 * Finds or builds the Temporal CLI v1.5.1 binary whose `temporal server start-dev` the Temporal tests
 * run against (a real server, SQLite, offline). The binary is cached in
 * `$BATON_CACHE_DIR/temporal-v1.5.1/temporal` (default cache dir `~/.cache/baton`, beside FerretDB);
 * a missing or broken one is built from the Go module proxy with `go install` into a temp `GOBIN`
 * and moved there (10–25 minutes, a 250 MB binary; needs Go ≥ 1.24), under a lock so that parallel
 * runs build once. A build prints one line to stderr when it starts and one when it ends, with the
 * seconds it took, so a first test run does not look stuck (CI builds it once per machine).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';

const run = promisify(execFile);

/** The Temporal CLI release the tests use. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const MODULE = 'github.com/temporalio/cli/cmd/temporal';
/**
 * The Temporal server inside CLI v1.5.1. A binary built with `go install` from the module proxy
 * reports its own version as `0.0.0-DEV` (no release stamping), so the server version identifies it.
 */
const SERVER_VERSION = 'Server 1.29.1';

/** Where the binary lives: `<cache dir>/temporal-v1.5.1/temporal`. */
export function temporalBinaryPath(
  cacheDir = process.env.BATON_CACHE_DIR ?? join(homedir(), '.cache', 'baton'),
): string {
  return join(cacheDir, `temporal-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/** The Go tool: `$GO`, else /usr/local/go/bin/go when present, else `go` on the PATH. */
function goTool(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** Whether the binary at `path` runs and reports the expected server (`temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)`). */
async function works(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  try {
    const { stdout } = await run(path, ['--version'], { timeout: 30_000 });
    return stdout.startsWith('temporal version') && stdout.includes(SERVER_VERSION);
  } catch {
    return false;
  }
}

/**
 * The path of a working Temporal CLI binary, building it first when needed.
 *
 * @param cacheDir overrides `$BATON_CACHE_DIR`
 * @throws {Error} saying what failed (Go missing, download refused, build error) with the tool's output
 */
export async function ensureTemporalBinary(cacheDir?: string): Promise<string> {
  const binary = temporalBinaryPath(cacheDir);
  if (await works(binary)) return binary;
  const dir = join(binary, '..');
  await mkdir(dir, { recursive: true });
  // A parallel run may be building: wait as long as a build may take under load (its 40-minute limit).
  const release = await lockfile.lock(dir, {
    lockfilePath: join(dir, 'build.lock'),
    stale: 30_000,
    update: 5_000,
    retries: { retries: 1_500, minTimeout: 1_000, maxTimeout: 2_000, factor: 1.2 },
  });
  try {
    if (await works(binary)) return binary;
    const started = performance.now();
    process.stderr.write(
      `Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go into ${binary} for the Temporal tests (once; 10–25 minutes)…\n`,
    );
    try {
      await buildTemporal(binary);
    } catch (error) {
      process.stderr.write(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} failed after ${seconds(started)} s.\n`);
      throw error;
    }
    process.stderr.write(`Built the Temporal CLI ${TEMPORAL_CLI_VERSION} in ${seconds(started)} s.\n`);
    if (!(await works(binary)))
      throw new Error(
        `The Temporal binary built at ${binary} does not run or does not report ${SERVER_VERSION} (CLI ${TEMPORAL_CLI_VERSION}).`,
      );
    return binary;
  } finally {
    await release();
  }
}

async function buildTemporal(binary: string): Promise<void> {
  const go = goTool();
  // A temp GOBIN beside the binary (same file system), so the finished binary is moved in by one rename.
  const gobin = await mkdtemp(`${binary}.gobin-`);
  try {
    const env = { ...process.env, GOBIN: gobin, GOFLAGS: '-buildvcs=false' };
    try {
      await run(go, ['install', `${MODULE}@${TEMPORAL_CLI_VERSION}`], { env, timeout: 2_400_000, maxBuffer: 32 << 20 });
    } catch (cause) {
      throw new Error(
        `"${go} install ${MODULE}@${TEMPORAL_CLI_VERSION}" failed: ${describe(cause)}. Install Go ≥ 1.24 (https://go.dev/dl) or put a temporal ${TEMPORAL_CLI_VERSION} binary at ${binary}.`,
        { cause },
      );
    }
    await rename(join(gobin, 'temporal'), binary);
  } finally {
    await rm(gobin, { recursive: true, force: true });
  }
}

/** Seconds since `start` (a `performance.now()` reading), to one decimal. */
function seconds(start: number): string {
  return ((performance.now() - start) / 1000).toFixed(1);
}

function describe(error: unknown): string {
  const e = error as { message?: string; stderr?: string };
  const stderr = typeof e.stderr === 'string' ? e.stderr.trim().split('\n').slice(-15).join('\n') : '';
  return `${e.message ?? String(error)}${stderr ? `\n${stderr}` : ''}`;
}
