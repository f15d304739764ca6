import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const script = fileURLToPath(new URL('./fileStoreWriter.ts', import.meta.url));

/** A running `fileStoreWriter.ts` process. */
export interface Writer {
  child: ChildProcess;
  /** stdout lines so far. */
  lines: string[];
  /** Resolves with the exit code (or the signal name) and stderr when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Starts `node --import tsx fileStoreWriter.ts <args>` from the repository root (where tsx is installed). */
export function spawnWriter(args: string[]): Writer {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, lines, exited };
}

/** Resolves once `predicate` holds for the writer's output (checked every 5 ms), or rejects when it exits first. */
export async function waitForOutput(writer: Writer, predicate: (lines: string[]) => boolean): Promise<void> {
  let ended = false;
  void writer.exited.then(() => {
    ended = true;
  });
  while (!predicate(writer.lines)) {
    if (ended) throw new Error(`The writer exited before the expected output: ${(await writer.exited).stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
