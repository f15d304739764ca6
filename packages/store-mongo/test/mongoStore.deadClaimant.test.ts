/**
 * MongoStore with version claims (FerretDB): a writer SIGKILLed between claiming a version and
 * applying its update must not block the session. The next writer completes the dead writer's
 * claimed update after a short lease (CLAIM_LEASE_MS) and then wins on top of it: nothing is
 * lost (the dead writer's change and the new one are both there) and nothing is applied twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConcurrencyError, type Session } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MongoStore } from '../src/index.js';
import { CLAIM_LEASE_MS } from '../src/operations/compareAndSet.js';
import { createTestMongoStore, type TestMongoStore } from './testStore.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const childScript = fileURLToPath(new URL('./support/claimChild.ts', import.meta.url));

/** Runs claimChild.ts until it has claimed version `expectedVersion + 1`, then kills it with SIGKILL. */
async function killAfterClaim(test: TestMongoStore, sessionId: string, expectedVersion: number): Promise<void> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', childScript, test.url, test.dbName, sessionId, String(expectedVersion)],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  try {
    const deadline = Date.now() + 25_000;
    while (!output.includes('claimed\n')) {
      if (child.exitCode !== null) throw new Error(`The child exited before claiming:\n${output}`);
      if (Date.now() > deadline) throw new Error(`The child never claimed:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');
  expect(output).not.toContain('updated');
}

/** One write attempt of {@link writeUntilAccepted}: when it started (`Date.now()`) and whether it was accepted. */
interface Attempt {
  startedAt: number;
  accepted: boolean;
}

/** Retries `state.second = text` with a fresh read after each ConcurrencyError; returns the session and every attempt. */
async function writeUntilAccepted(
  store: MongoStore,
  id: string,
  text: string,
  deadlineMs: number,
): Promise<{ session: Session; attempts: Attempt[] }> {
  const deadline = Date.now() + deadlineMs;
  const attempts: Attempt[] = [];
  for (;;) {
    const startedAt = Date.now();
    const current = (await store.getSession(id))!;
    try {
      const session = await store.updateSession(
        id,
        { state: { ...current.state, second: text } },
        { expectedVersion: current.version },
      );
      attempts.push({ startedAt, accepted: true });
      return { session, attempts };
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || Date.now() > deadline) throw error;
      attempts.push({ startedAt, accepted: false });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('MongoStore: a writer killed between its version claim and its update', () => {
  let test: TestMongoStore;
  beforeAll(async () => {
    test = await createTestMongoStore('dead_claimant', { versionClaims: true });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  // Each test starts a child under tsx (seconds on a loaded machine; killAfterClaim allows it 25 s) before its writes.
  it('blocks the session only for the claim lease: the next writer completes the claimed update, then its own lands on top', {
    timeout: 90_000,
  }, async () => {
    const { store } = test;
    await store.createSession({ id: 'dead-1', userId: 'u-1' });
    await killAfterClaim(test, 'dead-1', 1);
    const killedAt = Date.now();
    const claims = await store.collections.versionClaims.find({ sessionId: 'dead-1' }).toArray();
    expect(claims.map((c) => c.version)).toEqual([2]);
    expect((await store.getSession('dead-1'))?.version).toBe(1);
    const leaseEndsAt = claims[0]!.at.getTime() + CLAIM_LEASE_MS;

    const { session, attempts } = await writeUntilAccepted(store, 'dead-1', 'from the new writer', 30_000);
    const waitedMs = Date.now() - killedAt;
    const refused = attempts.filter((a) => !a.accepted).length;
    console.log(
      `[dead claimant] the new writer was accepted ${waitedMs} ms after the SIGKILL (${refused} ConcurrencyErrors; lease ${CLAIM_LEASE_MS} ms)`,
    );
    // Blocked for the lease, and only for it (counted in attempts, not in ms, so a loaded machine cannot
    // fail it): every attempt started within the lease was refused; of those started after it, the first
    // completes the dead writer's update (and is refused as stale) and the next is accepted, at most two.
    const withinLease = attempts.filter((a) => a.startedAt < leaseEndsAt);
    const afterLease = attempts.filter((a) => a.startedAt >= leaseEndsAt);
    expect(withinLease.filter((a) => a.accepted)).toEqual([]);
    expect(afterLease.length).toBeGreaterThanOrEqual(1);
    expect(afterLease.length).toBeLessThanOrEqual(2);
    expect(afterLease.at(-1)?.accepted).toBe(true);
    // The dead writer's change became version 2 (applied once, by the next writer); the new writer's is version 3.
    expect(session).toMatchObject({
      version: 3,
      metadata: { writer: 'child' },
      state: { answer: 'from the killed writer', second: 'from the new writer' },
    });
    expect(await store.getSession('dead-1')).toEqual(session);
  });

  it('with the claim lease over, five racing writers from the claimed version all get ConcurrencyError, and then exactly one of five wins', {
    timeout: 90_000,
  }, async () => {
    const { store } = test;
    await store.createSession({ id: 'dead-2' });
    await killAfterClaim(test, 'dead-2', 1);
    await new Promise((resolve) => setTimeout(resolve, CLAIM_LEASE_MS + 100));

    const stale = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        store.updateSession('dead-2', { state: { racer: i } }, { expectedVersion: 1 }),
      ),
    );
    expect(stale.map((r) => r.status)).toEqual(Array(5).fill('rejected'));
    for (const r of stale) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    expect(await store.getSession('dead-2')).toMatchObject({ version: 2, state: { answer: 'from the killed writer' } });

    const race = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        store.updateSession('dead-2', { state: { racer: i } }, { expectedVersion: 2 }),
      ),
    );
    const won = race.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const winner = (won[0] as PromiseFulfilledResult<Session>).value;
    expect(await store.getSession('dead-2')).toEqual(winner);
    expect(winner.version).toBe(3);
  });
});
