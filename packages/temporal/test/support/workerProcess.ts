import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const script = fileURLToPath(new URL('./workerChild.ts', import.meta.url));

/** A worker in its own process (workerChild.ts), and what it printed. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves once the child printed `line` (rejects when it exits first or `timeoutMs` passes). */
  printed(line: string, timeoutMs?: number): Promise<void>;
  /** SIGKILL: a real crash, no shutdown of any kind. */
  kill(): Promise<void>;
}

/** Starts workerChild.ts with `args` (through tsx, `source` condition) and waits until it polls (`readyTimeoutMs`, default 90 s). */
export async function startWorkerProcess(args: readonly string[], readyTimeoutMs?: number): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += String(chunk);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const printed = async (line: string, timeoutMs = 90_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!output.split('\n').includes(line)) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`The worker exited before printing "${line}":\n${output}`);
      if (Date.now() > deadline)
        throw new Error(`The worker did not print "${line}" within ${timeoutMs} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const worker: WorkerProcess = {
    child,
    output: () => output,
    printed,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await printed('ready', readyTimeoutMs);
  } catch (error) {
    await worker.kill();
    throw error;
  }
  return worker;
}
