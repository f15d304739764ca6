import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, ofType, tempDir } from './support/helpers.js';
import { nestedCrashDesk } from './support/nestedCrashDesk.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const childScript = fileURLToPath(new URL('./support/nestedCrashChild.ts', import.meta.url));

/** Starts the child turn and kills it with SIGKILL once `look_up_order`'s result is stored as a pending write. */
async function crashMidInnerStep(directory: string): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', childScript, directory, join(directory, '..', 'runs.log')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + 25_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`The child exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`The pending write never appeared:\n${output}`);
      const probe = new FileStore({ directory });
      const checkpoint = await probe.loadCheckpoint('nested-crash', 'main').catch(() => undefined);
      await probe.close();
      if ((checkpoint?.pendingWrites.length ?? 0) >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

describe('workflow.asExecutor() after a real crash', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('a SIGKILL mid inner step: the outer resume finishes the inner step with the inner agent that made it, running only the unfinished tool', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const logFile = join(dir.path, 'runs.log');
    writeFileSync(logFile, '');
    const directory = join(dir.path, 'store');
    await crashMidInnerStep(directory);
    expect(readFileSync(logFile, 'utf8').trim().split('\n')).toEqual(['look_up_order:child']);

    const { workflow, store, triage, billingTriage, refunds } = nestedCrashDesk(directory, logFile, 'parent', false);
    const session = await workflow.session({ id: 'nested-crash' });
    expect(session.routingState).toBe('running');
    expect(session.activeAgent).toBe('billing');
    const events = await collect(session.resume());
    expect(readFileSync(logFile, 'utf8').trim().split('\n')).toEqual(['look_up_order:child', 'issue_refund:parent']);
    expect(triage.model.requests).toHaveLength(0);
    expect(billingTriage.model.requests).toHaveLength(0);
    expect(refunds.model.requests).toHaveLength(1);
    expect(ofType(events, 'agent.started').map((e) => e.agent)).toEqual(['billing', 'refunds']);
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'triage' });
    const stored = await store.readMessages('nested-crash', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'refunds', content: 'Refunded: look_up_order done, issue_refund done' });
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(new Set(stored.map((m) => m.seq)).size).toBe(stored.length);
    await store.close();
  });
});
