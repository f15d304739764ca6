/**
 * Finds or builds the FerretDB v1.24.2 binary the MongoDB tests run against (no mongod can be
 * downloaded in CI). The binary is cached in `$BATON_CACHE_DIR/ferretdb-v1.24.2/ferretdb`
 * (default cache dir `~/.cache/baton`); a missing or broken one is built from the Go module with
 * `go mod download` + `go build` (about two minutes; needs Go ≥ 1.24), under a lock so that parallel
 * runs build once. A build prints one line to stderr when it starts and one when it ends, with the
 * seconds it took, so a first test run does not look stuck.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';

const run = promisify(execFile);

/** The FerretDB release the tests use. */
export const FERRETDB_VERSION = 'v1.24.2';
const MODULE = 'github.com/FerretDB/FerretDB';

/** Where the binary lives: `<cache dir>/ferretdb-v1.24.2/ferretdb`. */
export function ferretdbBinaryPath(
  cacheDir = process.env.BATON_CACHE_DIR ?? join(homedir(), '.cache', 'baton'),
): string {
  return join(cacheDir, `ferretdb-${FERRETDB_VERSION}`, 'ferretdb');
}

/** The Go tool: `$GO`, else /usr/local/go/bin/go when present, else `go` on the PATH. */
function goTool(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** Whether the binary at `path` runs and reports the expected version. */
async function works(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  try {
    const { stdout } = await run(path, ['--version'], { timeout: 15_000 });
    return stdout.includes(`version: ${FERRETDB_VERSION}`);
  } catch {
    return false;
  }
}

/**
 * The path of a working FerretDB binary, building it first when needed.
 *
 * @param cacheDir overrides `$BATON_CACHE_DIR` (tests of the build path use a fresh temp dir)
 * @throws {Error} saying what failed (Go missing, download refused, build error) with the tool's output
 */
export async function ensureFerretdbBinary(cacheDir?: string): Promise<string> {
  const binary = ferretdbBinaryPath(cacheDir);
  if (await works(binary)) return binary;
  const dir = join(binary, '..');
  await mkdir(dir, { recursive: true });
  // A parallel run (another vitest project's globalSetup) may be building: wait for it as long as a
  // build may take (its download and build time limits, 300 s + 600 s, and then some), not the
  // "about two minutes" of an idle machine, or a loaded first run fails here while the build goes on.
  const release = await lockfile.lock(dir, {
    lockfilePath: join(dir, 'build.lock'),
    stale: 30_000,
    update: 5_000,
    retries: { retries: 600, minTimeout: 1_000, maxTimeout: 2_000, factor: 1.2 },
  });
  try {
    if (await works(binary)) return binary;
    const started = performance.now();
    process.stderr.write(
      `Building FerretDB ${FERRETDB_VERSION} with Go into ${binary} for the MongoDB tests (once; about two minutes)…\n`,
    );
    try {
      await buildFerretdb(binary);
    } catch (error) {
      process.stderr.write(`Building FerretDB ${FERRETDB_VERSION} failed after ${seconds(started)} s.\n`);
      throw error;
    }
    process.stderr.write(`Built FerretDB ${FERRETDB_VERSION} in ${seconds(started)} s.\n`);
    if (!(await works(binary)))
      throw new Error(`The FerretDB binary built at ${binary} does not run or does not report ${FERRETDB_VERSION}.`);
    return binary;
  } finally {
    await release();
  }
}

async function buildFerretdb(binary: string): Promise<void> {
  const go = goTool();
  const env = { ...process.env, GOFLAGS: '-buildvcs=false' };
  let moduleDir: string;
  try {
    const { stdout } = await run(go, ['mod', 'download', '-json', `${MODULE}@${FERRETDB_VERSION}`], {
      env,
      timeout: 300_000,
      maxBuffer: 8 << 20,
    });
    moduleDir = (JSON.parse(stdout) as { Dir?: string }).Dir ?? '';
    if (moduleDir === '') throw new Error(`no "Dir" in the output: ${stdout}`);
  } catch (cause) {
    throw new Error(
      `Cannot download ${MODULE}@${FERRETDB_VERSION} with "${go} mod download": ${describe(cause)}. Install Go ≥ 1.24 (https://go.dev/dl) or set MONGODB_URL to a running MongoDB.`,
      { cause },
    );
  }
  const source = await mkdtemp(join(tmpdir(), 'baton-ferretdb-src-'));
  try {
    await cp(moduleDir, source, { recursive: true });
    await makeWritable(source);
    // The module zip lacks the generated version file that FerretDB's main package insists on.
    await writeFile(join(source, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
    const partial = `${binary}.partial-${process.pid}`;
    try {
      await run(go, ['build', '-o', partial, './cmd/ferretdb'], {
        cwd: source,
        env,
        timeout: 600_000,
        maxBuffer: 32 << 20,
      });
    } catch (cause) {
      throw new Error(`"go build ./cmd/ferretdb" of FerretDB ${FERRETDB_VERSION} failed: ${describe(cause)}`, {
        cause,
      });
    }
    await rename(partial, binary);
  } finally {
    await rm(source, { recursive: true, force: true });
  }
}

async function makeWritable(dir: string): Promise<void> {
  await run('chmod', ['-R', 'u+w', dir]);
  await chmod(dir, 0o755);
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
