/**
 * The reconciler scenario both replica suites run (FileStore and MongoStore): the replica that runs a
 * turn is SIGKILLed mid-turn while three other replicas reconcile; one of them takes the expired lease
 * over within lease expiry + one interval (on a FileStore: the later of lease expiry and the dead owner's
 * session lock going stale) and finishes the cut turn, exactly once.
 */
import { expect } from 'vitest';
import { client, sseMessages } from './httpClient.js';
import { openReplicaStore } from './replicaStore.js';
import { BILLING_REPLY, type Replica, startReplica } from './replicas.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How the scenario's replicas run: their lease TTL and reconcile interval, in ms. */
export const CUT_TURN_LEASE_MS = 1500;
export const CUT_TURN_RECONCILE_MS = 300;
/** Slack over expiry + one interval for the test's 50 ms polling and a loaded machine's scheduling. */
const TAKEOVER_SLACK_MS = 1000;

/**
 * Runs the scenario on the store named by `storeEnv` (see `openReplicaStore`) for session `sessionId`
 * (new); every replica it starts is pushed onto `started` (the suite kills them after).
 */
export async function raceReconcilersOnCutTurn(
  storeEnv: Record<string, string>,
  sessionId: string,
  started: Replica[],
): Promise<void> {
  const lease = { REPLICA_LEASE_MS: String(CUT_TURN_LEASE_MS) };
  const racerEnv = { ...storeEnv, ...lease, REPLICA_RECONCILE_MS: String(CUT_TURN_RECONCILE_MS) };
  // The racers are up (and reconciling) before the owner dies, as the other replicas of a deployment are.
  const [owner, ...racers] = await Promise.all([
    startReplica({ ...storeEnv, ...lease, REPLICA_PACE_MS: '40' }),
    startReplica(racerEnv),
    startReplica(racerEnv),
    startReplica(racerEnv),
  ]);
  started.push(owner!, ...racers);
  const store = await openReplicaStore(storeEnv);
  try {
    await store.listExpiredLeases!({ before: new Date().toISOString() }); // connected before the turn starts
    await client(owner!.url).json('POST', '/sessions', { id: sessionId });
    const turn = await client(owner!.url).call(
      'POST',
      `/sessions/${sessionId}/messages`,
      { text: 'I was charged twice' },
      { accept: 'text/event-stream' },
    );
    let deltas = 0;
    let cutEventId: string | undefined;
    for await (const event of sseMessages(turn)) {
      cutEventId = event.id;
      if (event.event === 'message.delta' && ++deltas === 5) break;
    }
    const cut = await store.getBranchLease!(sessionId, 'main');
    expect(cut).toMatchObject({ held: true });
    await owner!.kill();
    // The owner renewed its lease at most up to its death: it expires by then + the TTL. On a FileStore
    // the owner may die holding the session's lock (a kernel lock, let go with its process; a lock folder is broken once stale, `lockStaleMs`).
    const expiredBy = Date.now() + Math.max(CUT_TURN_LEASE_MS, Number(storeEnv.REPLICA_LOCK_STALE_MS ?? 0));
    let takenAt: number | undefined;
    let current = cut;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
      current = await store.getBranchLease!(sessionId, 'main');
      if (takenAt === undefined && current!.epoch > cut!.epoch) takenAt = Date.now();
      if (current!.held === false) break;
    }
    expect(current).toMatchObject({ held: false, epoch: cut!.epoch + 1 }); // one takeover, then released
    expect(takenAt! - expiredBy).toBeLessThanOrEqual(CUT_TURN_RECONCILE_MS + TAKEOVER_SLACK_MS);

    const messages = await store.readMessages(sessionId, 'main');
    expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
    expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i + 1));
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['I was charged twice']);
    const replies = messages.filter((m) => m.role === 'assistant' && m.agent === 'billing');
    expect(replies.map((m) => m.content)).toEqual([BILLING_REPLY]);
    const calls = await Promise.all(racers.map((racer) => racer.modelCalls()));
    expect(calls.reduce((a, b) => a + b, 0)).toBe(1); // billing's step, run again once; triage's handoff was stored

    // A client that saw the cut run's events follows the re-run on any replica.
    const events = await client(racers[0]!.url).stream('GET', `/sessions/${sessionId}/events`, undefined, {
      'last-event-id': cutEventId!,
    });
    const rerun = `${sessionId}/main/${cut!.epoch + 1}:`;
    expect(
      events.events
        .filter((e) => e.event === 'message.delta' && e.id.startsWith(rerun))
        .map((e) => e.data.delta)
        .join(''),
    ).toBe(BILLING_REPLY);
  } finally {
    await store.close();
  }
}
