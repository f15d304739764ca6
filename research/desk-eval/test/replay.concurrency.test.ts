import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BatonEvent, FileStore, InvalidInputError, MAIN_BRANCH } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CostMeter } from '../src/costReport.js';
import { FOLDS, foldOf } from '../src/folds.js';
import { sessionIdFor } from '../src/replayConversation.js';
import type { ReplayReport } from '../src/replayReport.js';
import { shareOut } from '../src/replayWorkers.js';
import { runReplay } from '../src/runReplay.js';
import { expectSameReport } from './support/comparableReport.js';

let dir: string;
let conversations: AbcdConversation[];
const reports = new Map<number, ReplayReport>();
const finishedOrder = new Map<number, string[]>();
/** Per session, the types of its events in order, for the in-thread run (`1`) and the run on two workers (`2`). */
const eventTypes = new Map<number, Map<string, string[]>>();
let onWorkers: ReplayReport;
const workerProgress: Array<{ id: string; done: number; total: number }> = [];

/** Per concurrency of the in-thread runs, the session of every event, in the order the events came. */
const eventSessions = new Map<number, string[]>();

/** The most sessions open at once in a stream of events: a session is open from its first event to its last. */
function mostOpenAtOnce(sessions: readonly string[]): number {
  const last = new Map<string, number>();
  for (const [i, session] of sessions.entries()) last.set(session, i);
  const open = new Set<string>();
  let most = 0;
  for (const [i, session] of sessions.entries()) {
    open.add(session);
    most = Math.max(most, open.size);
    if (last.get(session) === i) open.delete(session);
  }
  return most;
}

const recordEvents = (into: Map<string, string[]>) => (event: BatonEvent) => {
  if (!into.has(event.sessionId)) into.set(event.sessionId, []);
  into.get(event.sessionId)!.push(event.type);
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-concurrency-'));
  conversations = await loadConversations(DEMO_DATA_FILE);
  for (const concurrency of [1, 4]) {
    const order: string[] = [];
    finishedOrder.set(concurrency, order);
    const sessions: string[] = [];
    eventSessions.set(concurrency, sessions);
    const types = new Map<string, string[]>();
    if (concurrency === 1) eventTypes.set(1, types);
    const recordTypes = recordEvents(types);
    reports.set(
      concurrency,
      await runReplay({
        conversations,
        ontology: loadOntology(),
        deskStore: chooseDeskStore({ directory: join(dir, `c${concurrency}`) }),
        concurrency,
        onConversation: (outcome) => order.push(outcome.id),
        onEvent: (event) => {
          sessions.push(event.sessionId);
          if (concurrency === 1) recordTypes(event);
        },
      }),
    );
  }
  onWorkers = await runReplay({
    conversations,
    ontology: loadOntology(),
    deskStore: chooseDeskStore({ directory: join(dir, 'w2') }),
    workers: 2,
    onEvent: recordEvents(eventTypes.set(2, new Map()).get(2)!),
    onConversation: (outcome, done, total) => workerProgress.push({ id: outcome.id, done, total }),
  });
}, 600_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('replaying the demo conversations 4 at a time', () => {
  it('gives the same report as one at a time: routing, casework, counts, tokens, every outcome in input order', () => {
    const one = reports.get(1)!;
    const four = reports.get(4)!;
    expect(one.counts.conversations).toBe(conversations.length);
    expect(one.counts.failed).toBe(0);
    expect(one.conversations.map((c) => c.id)).toStrictEqual(conversations.map((c) => c.id));
    expectSameReport(four, one);
  });

  it('really ran conversations side by side, at most 4 at a time, and stored every session and episode', async () => {
    // Lanes start together and each awaits the store: the sessions' events interleave (by how lanes are scheduled, not by timing).
    expect(mostOpenAtOnce(eventSessions.get(1)!)).toBe(1);
    expect(mostOpenAtOnce(eventSessions.get(4)!)).toBeGreaterThanOrEqual(2);
    expect(mostOpenAtOnce(eventSessions.get(4)!)).toBeLessThanOrEqual(4);
    expect(finishedOrder.get(1)).toStrictEqual(conversations.map((c) => c.id));
    expect([...finishedOrder.get(4)!].sort()).toStrictEqual(conversations.map((c) => c.id).sort());
    const four = reports.get(4)!;
    expect(four.counts.episodes).toBe(conversations.length);
    expect((await readdir(join(dir, 'c4', 'sessions'))).length).toBeGreaterThanOrEqual(conversations.length);
  });

  it('counts every stored message once when lanes finish together (the count a new store reads back)', async () => {
    const store = new FileStore({ directory: join(dir, 'c4') });
    let stored = 0;
    for (const conversation of conversations)
      stored += (await store.readMessages(sessionIdFor(conversation.id), MAIN_BRANCH)).length;
    await store.close();
    expect(stored).toBeGreaterThan(conversations.length);
    expect(reports.get(4)!.counts.messages).toBe(stored);
    expect(reports.get(1)!.counts.messages).toBe(stored);
  });

  it('refuses a concurrency below 1 with a named error, before touching the store', async () => {
    const empty = join(dir, 'untouched');
    await expect(
      runReplay({
        conversations,
        ontology: loadOntology(),
        deskStore: chooseDeskStore({ directory: empty }),
        concurrency: 0,
      }),
    ).rejects.toThrow(InvalidInputError);
    await expect(readdir(empty)).rejects.toThrow(/ENOENT/);
  });
});

describe('replaying the demo conversations on two worker threads', () => {
  it('gives the same report as one thread: routing, casework, counts, tokens, every outcome in input order', () => {
    const one = reports.get(1)!;
    expect(onWorkers.counts.failed).toBe(0);
    expect(one.conversations.map((c) => c.id)).toStrictEqual(conversations.map((c) => c.id));
    expectSameReport(onWorkers, one);
  });

  it("trained, in the workers, the folds of each worker's share: a fold cut between the two is trained twice", () => {
    const shares = shareOut(
      conversations.map((c) => c.id),
      2,
      { folds: FOLDS },
    );
    const expected = shares
      .map((share) => new Set(share.map((index) => foldOf(conversations[index]!.id))).size)
      .reduce((a, b) => a + b, 0);
    expect(reports.get(1)!.measurements.trainings).toBe(5);
    expect(onWorkers.measurements.trainings).toBe(expected);
    // Each share is a run of whole folds but at most one cut: together they hold every conversation once.
    expect(shares.flat().sort((a, b) => a - b)).toStrictEqual(conversations.map((_, index) => index));
  });

  it('passes every event and every finished conversation back to this thread, and stores every message and episode once', async () => {
    expect(eventTypes.get(2)).toStrictEqual(eventTypes.get(1));
    expect(workerProgress.map((p) => p.done)).toStrictEqual(conversations.map((_, index) => index + 1));
    expect(workerProgress.every((p) => p.total === conversations.length)).toBe(true);
    expect(workerProgress.map((p) => p.id).sort()).toStrictEqual(conversations.map((c) => c.id).sort());
    const store = new FileStore({ directory: join(dir, 'w2') });
    let stored = 0;
    let episodes = 0;
    for (const conversation of conversations) {
      stored += (await store.readMessages(sessionIdFor(conversation.id), MAIN_BRANCH)).length;
      if ((await store.getEpisode(sessionIdFor(conversation.id))) !== undefined) episodes += 1;
    }
    await store.close();
    expect(onWorkers.counts.messages).toBe(stored);
    expect(stored).toBe(reports.get(1)!.counts.messages);
    expect(episodes).toBe(conversations.length);
  });

  it('throws the error that stopped a worker, by name and message, as the in-thread replay does', async () => {
    // A conversation without turns (not what loadConversations gives; the models learn from the good ones): replaying it throws, in a worker as in this thread.
    const broken = [...conversations.slice(0, 3), { ...conversations[3]!, turns: null } as unknown as AbcdConversation];
    const failure = (workers: number, folder: string) =>
      runReplay({
        conversations: broken,
        training: conversations,
        ontology: loadOntology(),
        deskStore: chooseDeskStore({ directory: join(dir, folder) }),
        workers,
      }).then(
        () => expect.unreachable('the replay should fail'),
        (error: Error) => error,
      );
    const inThread = await failure(1, 'broken-1');
    const onTwo = await failure(2, 'broken-2');
    expect(inThread.name).toBe('TypeError');
    expect(inThread.message).toBe('conversation.turns is not iterable');
    expect(onTwo.name).toBe(inThread.name);
    expect(onTwo.message).toBe(inThread.message);
  }, 120_000);

  it('refuses workers below 1 with a named error, before touching the store', async () => {
    const empty = join(dir, 'untouched-workers');
    await expect(
      runReplay({
        conversations,
        ontology: loadOntology(),
        deskStore: chooseDeskStore({ directory: empty }),
        workers: 0,
      }),
    ).rejects.toThrow(InvalidInputError);
    await expect(readdir(empty)).rejects.toThrow(/ENOENT/);
  });
});

describe('CostMeter.add', () => {
  it('merges per-conversation meters into what one meter of all the events gives', () => {
    const event = (sessionId: string, agent: string, inputTokens: number) =>
      ({
        type: 'model.completed',
        sessionId,
        agent,
        usage: { inputTokens, outputTokens: 1, totalTokens: inputTokens + 1, requests: 1 },
      }) as never;
    const events = [
      event('s1', 'triage', 5),
      event('s1', 'billing', 7),
      event('s2', 'triage', 3),
      event('s2', 'orders', 2),
    ];
    const all = new CostMeter();
    for (const e of events) all.observe(e);
    const first = new CostMeter();
    const second = new CostMeter();
    for (const e of events.slice(0, 2)) first.observe(e);
    for (const e of events.slice(2)) second.observe(e);
    const merged = new CostMeter().add(first).add(second);
    expect(merged.report()).toStrictEqual(all.report());
    expect(Object.keys(merged.report().perAgent)).toStrictEqual(['triage', 'billing', 'orders']);
    expect(merged.report().total).toStrictEqual({ inputTokens: 17, outputTokens: 4, totalTokens: 21, requests: 4 });
  });
});
