import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, danglingToolCalls, ofType, tempDir } from './support/helpers.js';
import { killChildWhen } from './support/killChild.js';
import { nestedCrashDesk } from './support/nestedCrashDesk.js';

const childScript = fileURLToPath(new URL('./support/nestedCrashChild.ts', import.meta.url));

/** Starts the child turn and kills it with SIGKILL once `look_up_order`'s result is stored as a pending write. */
async function crashMidInnerStep(directory: string): Promise<void> {
  const oneStored = async () => {
    const probe = new FileStore({ directory });
    const checkpoint = await probe.loadCheckpoint('nested-crash', 'main').catch(() => undefined);
    await probe.close();
    return (checkpoint?.pendingWrites.length ?? 0) >= 1;
  };
  await killChildWhen(childScript, [directory, join(directory, '..', 'runs.log')], oneStored, 'The pending write');
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
    expect(stored.at(-1)).toMatchObject({
      agent: 'refunds',
      content: 'Refunded: look_up_order done, issue_refund done',
    });
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(new Set(stored.map((m) => m.seq)).size).toBe(stored.length);
    await store.close();
  });
});
