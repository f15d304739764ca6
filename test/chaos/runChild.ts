/**
 * Starts one chaos child (`chaosChild.ts` under tsx with the `source` condition, as the example
 * runs) and tells how it ended: killed at its kill point, finished with the session closed, or failed.
 */
import { spawnChaosChild } from './spawnChaosChild.js';
import type { TrialConfig } from './trialConfig.js';

/** How a child ended. */
export type ChildOutcome =
  | { kind: 'killed'; durationMs: number }
  | { kind: 'closed'; points: number; retries: number; durationMs: number }
  | { kind: 'error'; message: string };

/**
 * Runs one child of a trial to its end.
 *
 * @param killAt the kill point it dies at (0: none)
 * @param killAfterMs when set, the parent SIGKILLs the child this long after starting it (if it still runs): a kill that can land anywhere, inside a store call too
 * @param timeoutMs a child still running after this is SIGKILLed and reported as an error
 * @param abort when it aborts, the child is SIGKILLed at once (the campaign is being stopped)
 * @example
 * ```ts
 * const outcome = await runChild(trial, 37, 0);
 * ```
 */
export function runChild(
  trial: TrialConfig,
  killAt: number,
  child: number,
  killAfterMs?: number,
  timeoutMs = 180_000,
  abort?: AbortSignal,
): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const { process: started, stderr } = spawnChaosChild(
      'chaosChild.ts',
      { CHAOS_TRIAL: JSON.stringify(trial), CHAOS_KILL_AT: String(killAt), CHAOS_CHILD: String(child) },
      ['ignore', 'pipe', 'pipe'],
    );
    let stdout = '';
    started.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      started.kill('SIGKILL');
    }, timeoutMs);
    const timedKill = killAfterMs === undefined ? undefined : setTimeout(() => started.kill('SIGKILL'), killAfterMs);
    const stop = () => started.kill('SIGKILL');
    abort?.addEventListener('abort', stop, { once: true });
    started.once('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(timedKill);
      abort?.removeEventListener('abort', stop);
      const durationMs = Date.now() - startedAt;
      if (timedOut)
        resolve({
          kind: 'error',
          message: `child ${child} still running after ${timeoutMs} ms; killed. stderr: ${stderr().trim().slice(-1500)}`,
        });
      else if (signal === 'SIGKILL') resolve({ kind: 'killed', durationMs });
      else if (code === 0) {
        const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { points?: number; retries?: number };
        resolve({ kind: 'closed', points: result.points ?? 0, retries: result.retries ?? 0, durationMs });
      } else
        resolve({
          kind: 'error',
          message: `child ${child} exited with ${code ?? signal}: ${stderr().trim().slice(-1500)}`,
        });
    });
  });
}
