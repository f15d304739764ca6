/**
 * Starts a process of a trial: a script of this folder under tsx with the `source` condition (as the
 * example runs), from the repository root, with the trial's environment; keeps the tail of its stderr
 * for the report of a process that failed.
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A started process and the tail of what it wrote to stderr so far. */
export interface ChaosProcess {
  process: ChildProcess;
  /** The last 4,000 characters of its stderr. */
  stderr(): string;
}

/**
 * Spawns `node --import tsx --conditions=source test/chaos/<script>` with `env` added to this process's environment.
 * @param stdio stdin, stdout and stderr (stderr is read here, so keep it `pipe`)
 * @example
 * ```ts
 * const worker = spawnChaosChild('temporalWorkerChild.ts', { CHAOS_TRIAL: JSON.stringify(trial) }, ['ignore', 'ignore', 'pipe']);
 * ```
 */
export function spawnChaosChild(script: string, env: Record<string, string>, stdio: StdioOptions): ChaosProcess {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const started = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', path], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio,
  });
  let stderr = '';
  started.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return { process: started, stderr: () => stderr };
}

/**
 * SIGKILLs every process of `children` and resolves once all of them exited.
 * @example
 * ```ts
 * await killAll(workers);
 * ```
 */
export async function killAll(children: Iterable<ChildProcess>): Promise<void> {
  const all = [...children];
  const exits = all.map((c) => new Promise((resolve) => c.once('exit', resolve)));
  for (const child of all) child.kill('SIGKILL');
  await Promise.all(exits);
}
