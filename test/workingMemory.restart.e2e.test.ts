import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  agent,
  branchStateAt,
  FileStore,
  InMemoryStore,
  type ModelMessage,
  type ModelRequest,
  type State,
  type Store,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { WorkingMemory } from '@baton/memory';
import { afterAll, describe, expect, it } from 'vitest';

/** A user message of about 85 tokens. */
const long = (order: number) =>
  `Order ${order}: the parcel arrived damaged and I want my money back. `.repeat(5).trim();
/** Turns filling a 400-token budget: working memory summarises from the sixth turn on; the tenth drops nothing new. */
const TURNS = [long(1), long(2), long(3), long(4), 'thanks', long(5), 'ok', 'fine', long(6), 'yes'];
const lastUser = (request: ModelRequest) => request.messages.findLast((m) => m.role === 'user')?.content ?? '';
/** What a model input says (ids differ between runs). */
const said = (messages: readonly ModelMessage[]) => messages.map((m) => `${m.role}: ${m.content}`);

/**
 * One process: a new workflow, a new working memory, a new summariser model. The summariser's answer
 * depends only on what it is asked (the orders it read, a hash of the request), so two processes
 * that ask the same give the same summary, and any summary tells which orders it covers.
 */
function openProcess(store: Store) {
  const agentModel = new ScriptedModel((request) => ({ text: `Done: ${lastUser(request).slice(0, 8)}.` }));
  const summarizer = new ScriptedModel((request) => {
    const body = request.messages.at(-1)?.content ?? '';
    // The orders of the new lines ("Order 3: …") and of the summary so far ("orders 1, 2").
    const orders = [
      ...new Set([...body.matchAll(/\b(?:Order|orders) (\d+(?:, \d+)*)/g)].flatMap((m) => m[1]!.split(', '))),
    ].join(', ');
    return {
      text: `Refunds asked for orders ${orders} (${createHash('sha256').update(body).digest('hex').slice(0, 8)}).`,
    };
  });
  const memory = new WorkingMemory({ maxTokens: 400, strategy: 'summarize', summarizer, summaryMaxTokens: 60 });
  const desk = new HandoffBuilder({ name: 'desk' })
    .participants(
      agent({ name: 'desk', description: 'Refunds.', instructions: 'Refund damaged parcels.', model: agentModel }),
    )
    .store(store)
    .memory(memory)
    .build();
  return { desk, agentModel, summarizer };
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/**
 * Per store: a way to open it again as a restarted process would (FileStore: a new object on the same folder;
 * InMemoryStore: the same object).
 */
const stores: [string, () => Promise<() => Store>][] = [
  [
    'InMemoryStore',
    async () => {
      const store = new InMemoryStore();
      return () => store;
    },
  ],
  [
    'FileStore',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'baton-summary-restart-'));
      dirs.push(dir);
      return () => new FileStore({ directory: dir });
    },
  ],
];

const closeStore = async (store: Store) => {
  if (store instanceof FileStore) await store.close();
};

/** The slice of branch state where working memory keeps its summaries. */
/** The orders a summary says it covers ("Refunds asked for orders 1, 2 (…)"). */
const ordersOf = (summary: string) => /orders (\d+(?:, \d+)*)/.exec(summary)?.[1]?.split(', ') ?? [];
const summariesOf = (state: State | undefined) =>
  ((state?.['provider:working-memory'] as State | undefined)?.summaries ?? {}) as Record<string, string>;

describe.each(stores)("working memory's summaries persist with the session (%s)", (_, makeStore) => {
  it('a restarted process reuses the stored summary: no summariser call, the same model input', async () => {
    // The reference: one process runs every turn.
    const reference = openProcess(new InMemoryStore());
    const referenceSession = await reference.desk.session({ id: 'chat-1' });
    const referenceCalls: number[] = [];
    const referenceInputs: string[][] = [];
    for (const text of TURNS) {
      const before = reference.summarizer.requests.length;
      await referenceSession.send(text);
      referenceCalls.push(reference.summarizer.requests.length - before);
      referenceInputs.push(said(reference.agentModel.requests.at(-1)!.messages));
    }
    expect(referenceCalls.slice(5, 9).every((n) => n > 0)).toBe(true);
    expect(referenceCalls[9]).toBe(0);

    // One process runs the first nine turns; a restarted one (a new workflow, memory and summariser; a new store
    // object for FileStore) runs the tenth: it reuses the stored summary, asks the summariser nothing, and builds
    // the same input.
    const reopen = await makeStore();
    const first = reopen();
    const firstProcess = openProcess(first);
    const firstSession = await firstProcess.desk.session({ id: 'chat-1' });
    for (const text of TURNS.slice(0, 9)) await firstSession.send(text);
    await closeStore(first);
    const restartedStore = reopen();
    const restarted = openProcess(restartedStore);
    await (await restarted.desk.session({ id: 'chat-1' })).send(TURNS[9]!);
    expect(restarted.summarizer.requests).toHaveLength(0);
    const summaryLine = (model: ScriptedModel) =>
      said(model.requests.at(-1)!.messages).find((line) => line.startsWith('context: Summary'));
    expect(said(restarted.agentModel.requests.at(-1)!.messages)).toEqual(referenceInputs[9]);
    expect(summaryLine(restarted.agentModel)).toBe(summaryLine(firstProcess.agentModel));
    await closeStore(restartedStore);

    // The same turns, each in a new process: every summary asked for once, as in one process; every input the same.
    const reopenEach = await makeStore();
    const calls: number[] = [];
    for (const [turn, text] of TURNS.entries()) {
      const store = reopenEach();
      const process = openProcess(store);
      await (await process.desk.session({ id: 'chat-1' })).send(text);
      calls.push(process.summarizer.requests.length);
      expect(said(process.agentModel.requests.at(-1)!.messages), `turn ${turn + 1}`).toEqual(referenceInputs[turn]);
      await closeStore(store);
    }
    expect(calls).toEqual(referenceCalls);
    const last = referenceInputs[9]!.find((line) => line.startsWith('context: Summary'));
    expect(ordersOf(last!)).toEqual(['1', '2', '3', '4']);

    // Where it is kept: working memory's slice of the branch state, at most 4 summaries; deleted with the session.
    const store = reopenEach();
    const kept = summariesOf((await store.getBranch('chat-1', 'main'))?.state);
    expect(Object.keys(kept)).toHaveLength(4);
    expect(last).toContain(Object.values(kept).at(-1));
    await store.deleteSession('chat-1');
    const again = openProcess(store);
    await (await again.desk.session({ id: 'chat-1' })).send('hello');
    expect(summariesOf((await store.getBranch('chat-1', 'main'))?.state)).toEqual({});
    await closeStore(store);
  });

  it('a fork starts from the summaries as of its fork point, never one of messages it does not have', async () => {
    const reopen = await makeStore();
    const store = reopen();
    const main = openProcess(store);
    const session = await main.desk.session({ id: 'chat-2' });
    const headAfter: number[] = [];
    for (const text of [...TURNS, long(9), long(10), long(11)]) {
      await session.send(text);
      headAfter.push(session.messages.at(-1)!.seq);
    }
    const mainMessages = await store.readMessages('chat-2', 'main');
    // By now main's summaries cover orders 5 and 6 (messages after turn 5).
    const mainSummaries = Object.values(summariesOf((await store.getBranch('chat-2', 'main'))?.state));
    expect(ordersOf(mainSummaries.at(-1)!)).toEqual(expect.arrayContaining(['5', '6']));
    await closeStore(store);

    // In a new process: a fork after turn 5 (before any summary) has no summary, and summarises only its own messages.
    const store2 = reopen();
    const second = openProcess(store2);
    const early = await (await second.desk.session({ id: 'chat-2' })).fork({ atSeq: headAfter[4]!, branchId: 'early' });
    expect(summariesOf((await store2.getBranch('chat-2', 'early'))?.state)).toEqual({});
    for (const order of [7, 8, 12, 13]) await early.send(long(order));
    const earlySummary = second.agentModel.requests.at(-1)!.messages.find((m) => m.role === 'context')?.content ?? '';
    expect(ordersOf(earlySummary)).toEqual(['1', '2', '3', '4', '7']);
    for (const request of second.summarizer.requests)
      expect(request.messages.at(-1)!.content).not.toMatch(/Order [56]\b|orders[\d, ]* [56]\b/);
    for (const summary of Object.values(summariesOf((await store2.getBranch('chat-2', 'early'))?.state))) {
      expect(ordersOf(summary).filter((order) => order === '5' || order === '6')).toEqual([]);
    }

    // A fork after turn 7 starts with the summaries main had then (of orders up to 4), not main's later ones,
    // and extends them.
    const atSeq = headAfter[6]!;
    const later = await (await second.desk.session({ id: 'chat-2', branch: 'main' })).fork({
      atSeq,
      branchId: 'later',
    });
    const asOfFork = summariesOf((await store2.getBranch('chat-2', 'later'))?.state);
    expect(asOfFork).toEqual(summariesOf(branchStateAt(mainMessages, atSeq)));
    expect(Object.keys(asOfFork)).toHaveLength(2);
    for (const summary of Object.values(asOfFork))
      expect(ordersOf(summary).filter((order) => Number(order) > 4)).toEqual([]);
    const before = second.summarizer.requests.length;
    await later.send('fine');
    const asked = second.summarizer.requests.slice(before).map((r) => r.messages.at(-1)!.content);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`Summary so far:\n${Object.values(asOfFork).at(-1)}`);
    expect(asked[0]).not.toMatch(/Order [56]\b/);
    await closeStore(store2);
  });
});
