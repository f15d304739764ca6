import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Runs `script` (a TypeScript file, through tsx with the `source` condition) in a child process with
 * `args`, polls `ready` every 50 ms, and kills the child with SIGKILL once it says yes (a real
 * crash, at a moment the test chose).
 *
 * @param what what `ready` waits for, for the error when it never comes
 * @throws when the child exits first, or `ready` is not true within `timeoutMs` (the child's output quoted)
 */
export async function killChildWhen(
  script: string,
  args: readonly string[],
  ready: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 25_000,
): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + timeoutMs;
    while (!(await ready())) {
      if (child.exitCode !== null) throw new Error(`The child exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`${what} never happened:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}
